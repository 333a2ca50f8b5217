"""torchvision.datasets.VisionDataset: root, transform and target_transform."""

import os

from torchweb.utils.data import Dataset


class VisionDataset(Dataset):
    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        self.root = os.path.expanduser(root) if isinstance(root, str) else root
        has_separate = transform is not None or target_transform is not None
        if transforms is not None and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform, self.target_transform = transform, target_transform
        self.transforms = transforms if transforms is not None else (
            _Separate(transform, target_transform) if has_separate else None)

    def _apply(self, img, target):
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"Number of datapoints: {len(self)}"]
        if self.root is not None:
            lines.append(f"Root location: {self.root}")
        lines += self.extra_repr().splitlines()
        if self.transforms is not None:
            lines += [repr(self.transforms)]
        return "\n".join(["Dataset " + type(self).__name__] + [" " * self._repr_indent + ln for ln in lines])


class _Separate:
    def __init__(self, transform, target_transform):
        self.transform, self.target_transform = transform, target_transform

    def __call__(self, img, target):
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __repr__(self):
        return f"StandardTransform\nTransform: {self.transform!r}"
