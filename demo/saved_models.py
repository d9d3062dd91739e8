"""What the demo's serving clients share, without flags or project imports: finding an export."""

import os


def newest_version(export_dir: str) -> str:
    """export_dir/<version> with the largest number (TF Serving's choice)."""
    versions = [name for name in os.listdir(export_dir) if name.isdigit()]
    if not versions:
        raise ValueError(f"{export_dir}: no numbered SavedModel version")
    return os.path.join(export_dir, max(versions, key=int))
