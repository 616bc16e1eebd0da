"""What situate keeps: content-addressed stores of expensive results and the files beside them.

- :mod:`~situate.stores.keys`: content hashes that key every cached result;
- :mod:`~situate.stores.base`: the ``Stores`` protocol (config group ``store``) and charge rows;
- :mod:`~situate.stores.sqlite`: ``store: sqlite``, a SQLite table per store (the default);
- ``store: postgres`` (the same tables on a Postgres server) is :mod:`situate.postgres.store`;
- :mod:`~situate.stores.files`: whole files and folders written atomically (indexes, results);
- :mod:`~situate.stores.locks`: cross-process locks so parallel jobs build a shared result once;
- :mod:`~situate.stores.cached_step`: the one way a shared result is kept: loaded when written,
  else computed under its lock and written whole.
"""
