from lm.model import GatedEmbeddingLM
