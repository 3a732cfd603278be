from infini.attention import CompressiveMemory
