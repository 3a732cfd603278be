from .layer import DiagonalSSM
