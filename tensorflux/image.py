"""`tf.image`: TF1.15's image namespace (codecs, resizing, crops, flips, colour ops).

Op records and implementations live in tensorflux/_src/ops/image_*.py.
"""

from tensorflux._src.ops.image.image_codec import (  # noqa: F401
    decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png,
)
from tensorflux._src.ops.image.image_color import (  # noqa: F401
    adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation,
    grayscale_to_rgb, hsv_to_rgb, random_brightness, random_contrast, random_hue,
    random_saturation, rgb_to_grayscale, rgb_to_hsv,
)
from tensorflux._src.ops.image.image_ops import (  # noqa: F401
    central_crop, convert_image_dtype, crop_to_bounding_box, flip_left_right, flip_up_down,
    pad_to_bounding_box, per_image_standardization, random_flip_left_right,
    random_flip_up_down, resize_image_with_crop_or_pad, rot90, total_variation,
    transpose_image,
)
from tensorflux._src.ops.image.image_nms import non_max_suppression  # noqa: F401
from tensorflux._src.ops.image.image_resize import (  # noqa: F401
    ResizeMethod, resize_area, resize_bicubic, resize_bilinear, resize_image_with_pad,
    resize_images, resize_nearest_neighbor,
)
from tensorflux._src.ops.random.random_ops import random_crop  # noqa: F401

# TF1.15's other names for the same functions.
resize = resize_images
transpose = transpose_image
resize_with_crop_or_pad = resize_image_with_crop_or_pad

# Patches (the array family's records; tf.image.extract_patches has TF2's argument names).
from tensorflux._src.ops.array.patches import (  # noqa: E402,F401
    extract_image_patches, extract_patches,
)

# The rest of tf.image (issue 20).
from tensorflux._src.ops.image.image_boxes import (  # noqa: E402,F401
    draw_bounding_boxes, sample_distorted_bounding_box,
)
from tensorflux._src.ops.image.image_codec_more import (  # noqa: E402,F401
    adjust_jpeg_quality, decode_jxl, decode_webp, random_jpeg_quality,
)
from tensorflux._src.ops.image.image_color import (  # noqa: E402,F401
    rgb_to_yiq, rgb_to_yuv, yiq_to_rgb, yuv_to_rgb,
)
from tensorflux._src.ops.image.image_crop import crop_and_resize, extract_glimpse  # noqa: E402,F401
from tensorflux._src.ops.image.image_nms import (  # noqa: E402,F401
    non_max_suppression_overlaps, non_max_suppression_padded, non_max_suppression_with_scores,
)
from tensorflux._src.ops.image.image_nms_batched import (  # noqa: E402,F401
    combined_non_max_suppression, generate_bounding_box_proposals,
)
from tensorflux._src.ops.image.image_quality import (  # noqa: E402,F401
    image_gradients, psnr, sobel_edges, ssim, ssim_multiscale,
)

# JPEG header and crop decoding, and the JPEG magic-byte test (also in tf.io).
from tensorflux._src.ops.image.image_jpeg import (  # noqa: E402,F401
    decode_and_crop_jpeg, extract_jpeg_shape, is_jpeg,
)
