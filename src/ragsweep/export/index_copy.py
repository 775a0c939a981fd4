"""What retrieval reads, copied from a run's cache into an exported folder's: the chunk vectors, the Chroma
collection (its vectors, which the pipeline searches exactly as the run did, and its HNSW graph as the run built it,
for the user's own Chroma queries) and the knowledge graph file."""

from __future__ import annotations

import shutil

from ragsweep.cache_dir import CacheDir


def copy_vectors(ctx, config, chunks, source: CacheDir) -> None:
    """The chunks' vectors, the run's question vectors and the configuration's Chroma collection, from ``source``
    into ``ctx.cache``.

    The whole embedded Chroma directory is copied and every other collection dropped from the copy: a collection
    built again from the same vectors may link another HNSW graph (``retrievers.chroma``), which a user's own
    Chroma queries would search differently (the pipeline's search is exact: ``retrievers.exact_vectors``). Without
    the collection in ``source``, ``load_pipeline`` builds it from the copied vectors."""
    from ragsweep.embeddings.cache import EmbeddingCache, text_key
    from ragsweep.embeddings.factory import model_key
    from ragsweep.pipelines.stages.index import index_key
    from ragsweep.retrievers.chroma import client_for, collection_name

    key = model_key(config.embedding)
    keys = [text_key(c.index_text) for c in chunks]
    asked = [text_key(q.question, "query") for q in ctx.dataset.questions]
    src, dest = EmbeddingCache(source.embeddings), EmbeddingCache(ctx.cache.embeddings)
    try:
        dest.put_many(key, sorted(src.get_many(key, keys).items()))
        # the run's questions with their measured latencies: asked again, they are answered as the run did
        vectors, ms = src.get_many(key, asked), src.get_ms(key, asked)
        timed = sorted(k for k in vectors if k in ms)
        dest.put_many(key, [(k, vectors[k]) for k in timed], ms=[ms[k] for k in timed])
    finally:
        src.close()
        dest.close()
    chroma = ctx.spec.vector_store.path or source.chroma
    if not chroma.is_dir():
        return
    shutil.copytree(chroma, ctx.cache.chroma)
    client = client_for(ctx.cache.chroma, None)
    wanted = collection_name(index_key(ctx, config, chunks))
    for collection in client.list_collections():
        name = getattr(collection, "name", collection)
        if name != wanted:
            client.delete_collection(name)
    del client
    _compact(ctx.cache.chroma)


def _compact(chroma) -> None:
    """Drop the segment folders no collection uses any more and give the SQLite file's free pages back: Chroma
    leaves both behind when a collection is deleted."""
    import sqlite3

    import chromadb

    chromadb.api.client.SharedSystemClient.clear_system_cache()  # closes the client's database
    db = sqlite3.connect(chroma / "chroma.sqlite3")
    try:
        segments = {row[0] for row in db.execute("SELECT id FROM segments")}
        db.execute("VACUUM")
    finally:
        db.close()
    for folder in chroma.iterdir():
        if folder.is_dir() and folder.name not in segments:
            shutil.rmtree(folder)


def copy_graphs(ctx, config, chunks, source: CacheDir) -> None:
    """The knowledge graph files the configuration searches (``<cache>/graphs/<key>.json``)."""
    from ragsweep.pipelines.stages.graph import graph_file_keys

    for key in graph_file_keys(ctx, [config], chunks):
        path = source.graph(key)
        if path.is_file():
            target = ctx.cache.graph(key)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
