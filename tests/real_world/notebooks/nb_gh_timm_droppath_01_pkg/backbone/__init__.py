from .mlp_mixer import MixerBackbone

__all__ = ["MixerBackbone"]
