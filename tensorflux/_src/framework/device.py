"""Device strings: `/job:ps/replica:0/task:1/device:GPU:0`, legacy `/gpu:0`, merging."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class DeviceSpec:
    """A (partial) device specification, as `tf.DeviceSpec`."""

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None  # None means "any" (written `*`)

    @classmethod
    def from_string(cls, spec: str) -> "DeviceSpec":
        return parse(spec)

    def to_string(self) -> str:
        out = []
        if self.job is not None:
            out.append(f"/job:{self.job}")
        if self.replica is not None:
            out.append(f"/replica:{self.replica}")
        if self.task is not None:
            out.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            out.append(f"/device:{self.device_type}:{index}")
        return "".join(out)

    def merge_from(self, dev: "DeviceSpec") -> "DeviceSpec":
        """Fields set in `dev` override this spec's (inner `tf.device` scopes win)."""
        changes = {k: getattr(dev, k) for k in ("job", "replica", "task")
                   if getattr(dev, k) is not None}
        if dev.device_type is not None:
            changes["device_type"] = dev.device_type
            changes["device_index"] = dev.device_index
        return replace(self, **changes)

    def __str__(self):
        return self.to_string()


def _int_field(name, value, spec):
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"Invalid device string {spec!r}: {name} must be an integer, "
                         f"got {value!r}") from None


def parse(spec) -> DeviceSpec:
    """Parses any of TF's device string forms; raises ValueError naming the bad part."""
    if isinstance(spec, DeviceSpec):
        return spec
    if spec is None:
        return DeviceSpec()
    if not isinstance(spec, str):
        raise TypeError(f"A device must be a string, a DeviceSpec, a function or None; "
                        f"got {spec!r} of type {type(spec).__name__}")
    fields = {}
    for part in spec.split("/"):
        if not part:
            continue
        pieces = part.split(":")
        head = pieces[0].lower()
        if len(pieces) == 2 and head in ("job", "replica", "task"):
            fields[head] = pieces[1] if head == "job" else _int_field(head, pieces[1], spec)
        elif head == "device" and len(pieces) in (2, 3):
            fields["device_type"] = pieces[1].upper()
            fields["device_index"] = (None if len(pieces) == 2 or pieces[2] == "*"
                                      else _int_field("device index", pieces[2], spec))
        elif len(pieces) == 2 and (head in ("cpu", "gpu", "tpu") or pieces[0].isupper()):
            # Legacy `/cpu:0` and bare `GPU:1`.
            fields["device_type"] = pieces[0].upper()
            fields["device_index"] = (None if pieces[1] == "*"
                                      else _int_field("device index", pieces[1], spec))
        else:
            raise ValueError(f"Unknown attribute: '{part}' in '{spec}'. Expected a device "
                             f"string such as '/job:worker/task:0/device:GPU:0' or '/cpu:0'.")
    return DeviceSpec(**fields)


def canonical_name(spec) -> str:
    return parse(spec).to_string()


def merge_device(outer: str, inner) -> str:
    """The device an op gets inside `tf.device(inner)` nested in a scope giving `outer`."""
    return parse(outer).merge_from(parse(inner)).to_string()
