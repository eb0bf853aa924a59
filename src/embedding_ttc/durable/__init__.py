"""Durable writes: a kill at any moment leaves the old state or the new one, never half of one.

Everything the project keeps on disk goes through this package:

* :mod:`~embedding_ttc.durable.files`: whole files replaced atomically (result cells,
  manifests, learned heads, TREC runs, cache entries, assembled models), and the fsynced
  writers of files inside a staged folder;
* :mod:`~embedding_ttc.durable.records`: JSONL records appended one whole line at a time
  (ledgers, run logs) and read back by record type;
* :mod:`~embedding_ttc.durable.directories`: folders staged beside their target and published
  whole (deployed indexes, ONNX exports, extracted models), their checksums, their locks.

The names below are the package's interface; import them from ``embedding_ttc.durable``.
"""

from embedding_ttc.durable.directories import (
    FileEntry,
    check_files,
    checksums,
    exchange,
    file_lock,
    link_or_copy,
    publish_dir,
    staging_dir,
)
from embedding_ttc.durable.files import (
    fsync_dir,
    fsync_file,
    fsync_tree,
    replacing,
    save_array,
    save_stacked,
    sha256_file,
    write_atomic,
    write_lines,
)
from embedding_ttc.durable.records import (
    append_record,
    cut_torn_tail,
    read_records,
    refuse_other_schema,
)

__all__ = [
    "FileEntry",
    "append_record",
    "check_files",
    "checksums",
    "cut_torn_tail",
    "exchange",
    "file_lock",
    "fsync_dir",
    "fsync_file",
    "fsync_tree",
    "link_or_copy",
    "publish_dir",
    "read_records",
    "refuse_other_schema",
    "replacing",
    "save_array",
    "save_stacked",
    "sha256_file",
    "staging_dir",
    "write_atomic",
    "write_lines",
]
