"""The evidence trail: atomic files and hashes, code fingerprints, provenance, pair
traces, the manifest and archives."""
