"""tf.image: flips, crops, pads, conversions (image_ops), colour records (image_color),
resizing (image_resize + image_resize_kernels), non-max suppression (image_nms) and the
PNG/JPEG/GIF/BMP codecs (image_codec, image_png)."""
