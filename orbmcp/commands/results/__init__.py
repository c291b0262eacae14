"""What handlers return: one ``Result`` type per command outcome, data only.

Every handler returns a ``Result`` (or None when it has nothing to show). ``to_json()`` gives the
documented JSON shape and ``exit_code`` the outcome; the renderers in ``orbmcp.render`` (json,
plain, rich) dispatch on the type. The models live in one module per command family and are
imported from there (``from orbmcp.commands.results.status import StatusReport``): a caller loads
only the families it uses, so the fast paths (an empty ``status``) import only the results they
show, and mypy and an editor follow every name to its definition.
"""
