"""``python -m orbmcp.config.names_refresh PROJECT CONFIG``: load the config once (which records
the server names completion reads, ``names_cache``) and print them as JSON; completion runs this in
a child process when its record is missing or out of date, so that it never imports pydantic."""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    import json

    from orbmcp import fs
    from orbmcp.config import paths
    from orbmcp.config.loader import load_config
    from orbmcp.config.names_cache import recorded_servers

    # The loader records names only in a global dir that exists; completion asks for them on
    # every Tab, so here (and only here) the private global dir is created for the record.
    try:
        fs.ensure_private_dir(paths.global_dir().absolute())
    except OSError:
        pass  # unusable: the names are printed all the same

    project, config_file = [*argv, "", ""][:2]
    try:
        config = load_config(
            project=Path(project) if project else None, config_file=Path(config_file) if config_file else None
        )
    except Exception:  # a broken config: completion shows no names, as before
        return 1
    names = {"servers": recorded_servers(config), "global_dir": str(config.global_dir)}
    sys.stdout.write(json.dumps(names))
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a child process by names_cache
    sys.exit(main(sys.argv[1:]))
