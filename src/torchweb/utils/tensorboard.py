"""torch.utils.tensorboard needs the tensorboard package and a file system that TensorBoard
reads; neither is in a web page. Importing it raises ImportError (as on a PyTorch install
without tensorboard), so scripts that guard the import take their fallback."""

raise ImportError(
    "torch.utils.tensorboard is not supported by torchweb: TensorBoard logs to files for a "
    "separate server; log with print() or plot in the page instead")
