"""A shallow copy of the bundled SmolLM2 for the local-judge tests whose subject is the
plumbing around the model (a configuration from the admin page, a moved model file, the
held-out search of `calibrate auto`), not what the model answers.

The copy keeps SmolLM2's tokenizer, chat template and metadata and its first ``layers``
transformer blocks (of 30), as they are, and says it has that many: llama.cpp runs it like any
GGUF model, through the same grammar, sampler and caches, and it reads a prompt about
``30 / layers`` times faster (SmolLM2 reads about 300 prompt tokens a second on two cores
here, and a call reads 300-800). What it answers is a real model's sampling through the
grammar; it is not a judge anyone should use. The tests of the bundled model itself (its
answers parse, its token counts, Ctrl+C and SIGKILL inside a call, the server) keep the whole
model.

Written with the ``gguf`` package (llama.cpp's own reader and writer of the format).
"""

from __future__ import annotations

from pathlib import Path


def shallow_copy(source: Path, target: Path, layers: int = 2) -> Path:
    """Write ``source`` (a llama-architecture GGUF) to ``target`` with only its first
    ``layers`` blocks; returns ``target``."""
    import gguf

    reader = gguf.GGUFReader(source)
    arch = reader.fields["general.architecture"].contents()
    block_count = f"{arch}.block_count"
    total = reader.fields[block_count].contents()
    if not 0 < layers <= total:
        raise ValueError(f"{source.name} has {total} blocks; cannot keep {layers}")
    writer = gguf.GGUFWriter(target, arch=arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue  # written by the writer itself
        kind = field.types[0]
        value = layers if name == block_count else field.contents()
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, value, kind, sub_type=sub)
    kept = [t for t in reader.tensors
            if not t.name.startswith("blk.") or int(t.name.split(".")[1]) < layers]
    for t in kept:
        writer.add_tensor_info(t.name, t.data.shape, t.data.dtype, t.data.nbytes,
                               t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for t in kept:
        writer.write_tensor_data(t.data, tensor_endianess=reader.endianess)
    writer.close()
    return target
