"""The scikit-learn 8x8 digits (scripts/fetch_digits.py) written as MNIST's four gzipped IDX files,
upsampled to 28x28, so that code reading MNIST (torchvision.datasets.MNIST with download=True,
pytorch/examples' mnist main.py) can run on them from a URL the page or test serves:

    site/data/mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz

The first N_TRAIN digits are the training split, the rest the test split. Pixels 0..16 become
0..255; each 28x28 pixel takes the 8x8 pixel it falls in (nearest). gzip's mtime is 0, so the files
(and their md5s) are the same on every build.
"""

import gzip
import hashlib
import json
import os

N_TRAIN = 1200
SIDE = 28
FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
         "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


def upsample(image64):
    """64 ints 0..16 (8x8, row-major) -> 784 bytes 0..255 (28x28, nearest)."""
    src = [min(7, (i * 8) // SIDE) for i in range(SIDE)]
    return bytes((image64[src[r] * 8 + src[c]] * 255) // 16 for r in range(SIDE) for c in range(SIDE))


def idx_images(images):
    return bytes([0, 0, 8, 3]) + len(images).to_bytes(4, "big") + SIDE.to_bytes(4, "big") * 2 + \
        b"".join(upsample(im) for im in images)


def idx_labels(labels):
    return bytes([0, 0, 8, 1]) + len(labels).to_bytes(4, "big") + bytes(labels)


def write(digits_json, dest, n_train=N_TRAIN, n_test=None):
    """Write the four files into dest (the first n_train digits, then n_test more, default all the
    rest); returns torchvision-style resources [(file name, md5)]."""
    with open(digits_json) as f:
        d = json.load(f)
    end = None if n_test is None else n_train + n_test
    ims, labs = d["images"], d["labels"]
    payloads = [idx_images(ims[:n_train]), idx_labels(labs[:n_train]),
                idx_images(ims[n_train:end]), idx_labels(labs[n_train:end])]
    os.makedirs(dest, exist_ok=True)
    resources = []
    for name, payload in zip(FILES, payloads):
        blob = gzip.compress(payload, mtime=0)
        path = os.path.join(dest, name)
        if not (os.path.isfile(path) and open(path, "rb").read() == blob):
            with open(path, "wb") as f:
                f.write(blob)
        resources.append((name, hashlib.md5(blob).hexdigest()))
    return resources
