from .experts import ExpertMLP, Router

__all__ = ["ExpertMLP", "Router"]
