"""gradguard: catch and explain PyTorch autograd in-place errors before the run."""
__version__ = "0.1.0"
