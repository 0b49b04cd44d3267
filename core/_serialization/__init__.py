"""The parts of ``opweave.save`` / ``opweave.load`` (see ``opweave.serialization``).

- ``_names``: PyTorch's names for dtypes, storage classes, qschemes and rebuild functions;
- ``_zip``: the zip archive (64-byte aligned records, reading records in place or mapped);
- ``_pickler``: writes ``data.pkl`` so that ``torch.load`` understands it, without PyTorch;
- ``_rebuild``: what those names mean in opweave (tensors over shared storages);
- ``_unpickler``: the restricted unpickler of ``weights_only=True`` and the trusted one;
- ``_allowlist``: ``add_safe_globals`` and friends.
"""
