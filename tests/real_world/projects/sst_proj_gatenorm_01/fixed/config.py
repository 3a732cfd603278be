from dataclasses import dataclass


@dataclass
class ModelConfig:
    dim: int = 8
    hidden: int = 16
    gate_norm: bool = False
    n_classes: int = 3
