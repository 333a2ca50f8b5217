"""What the digits workers share (train.html's and the landing page's, index.html): torchweb as
`torch` on WebGPU, the digits, and train.py (run as is) with a DataLoader that reports each batch
for the page's progress bar. The workers exec this file's text, then:

    await start(report)                      # WebGPU up, the adapter reported
    ns, images, labels = load(report, DIGITS_JSON, TRAIN_SRC, N_TRAIN)
    model, history = ns["train"](images, labels, ...)

report(type, json_text) posts a message to the page.
"""
import json

import pyodide.ffi
import torchweb


async def start(report):
    torchweb.install_torch_alias()
    if not pyodide.ffi.can_run_sync():
        raise RuntimeError("this browser cannot block on the GPU (no JSPI): train.py reads values with .item()")
    report("stage", json.dumps({"text": "starting WebGPU", "done": 3, "total": 4}))
    await torchweb.webgpu.init_async()
    report("adapter", json.dumps(torchweb.webgpu.adapter_info()))


def load(report, digits_json, train_src, n_train):
    """(train.py's namespace, images, labels); n_train > 0 keeps that many training images (the
    test split stays N_TEST images)."""
    data = json.loads(digits_json)
    images, labels = data["images"], data["labels"]
    ns = {"__name__": "digits_train"}
    exec(compile(train_src, "demos/digits/train.py", "exec"), ns)
    if n_train > 0:
        keep = ns["N_TEST"] + n_train
        images, labels = images[:keep], labels[:keep]

    class ProgressLoader(ns["DataLoader"]):
        """train.py's DataLoader, reporting each batch (the page's progress bar)."""
        epoch = 0

        def __iter__(self):
            ProgressLoader.epoch += 1
            steps = len(self)
            for i, b in enumerate(super().__iter__()):
                report("batch", json.dumps({"epoch": ProgressLoader.epoch, "step": i, "steps": steps}))
                yield b

    ns["DataLoader"] = ProgressLoader
    return ns, images, labels
