"""Task sets: gold manifests, dataset adapters and subject materializers.

(Named `dataset`, singular, like its Hydra group; `datasets/` holds the data and its docs.)
"""
