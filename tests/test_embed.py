"""Embedders: determinism, normalisation, similarity structure, the offline MiniLM model."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
import urllib.parse

import numpy as np
import pytest

from memlab.cli import main
from memlab.embed import Embedder, FastEmbedEmbedder, HashingEmbedder, make_embedder


def test_hashing_unit_norm_dtype_shape() -> None:
    e = HashingEmbedder(dim=64)
    v = e.embed_documents(["alpha beta", "gamma", ""])
    assert v.dtype == np.float32 and v.shape == (3, 64)
    np.testing.assert_allclose(np.linalg.norm(v[:2], axis=1), 1.0, rtol=1e-6)
    assert not v[2].any()  # no words -> zero vector
    np.testing.assert_array_equal(e.embed_query("alpha beta"), v[0])
    assert isinstance(e, Embedder)


def test_hashing_similarity_structure() -> None:
    e = HashingEmbedder()
    a, b, c = e.embed_documents(
        [
            "the deploy script needs the staging key",
            "deploy script needs a staging key",
            "my cat likes tuna",
        ]
    )
    assert a @ b > 0.7
    assert abs(a @ c) < 0.3


def test_hashing_is_stable_across_processes() -> None:
    """blake2b, not Python's salted hash(): the same vector under another PYTHONHASHSEED."""
    code = (
        "from memlab.embed import HashingEmbedder; "
        "print(HashingEmbedder(dim=32).embed_query('stable hashing').tolist())"
    )
    outs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
            ).stdout
        )
    assert len(outs) == 1
    here = HashingEmbedder(dim=32).embed_query("stable hashing")
    np.testing.assert_allclose(np.array(eval(outs.pop())), here, rtol=1e-6)


def test_hashing_name_depends_on_settings() -> None:
    assert HashingEmbedder().name == "hashing-v1-d384-c34-w1-b0.7-k0.5"  # what stores record
    assert HashingEmbedder(dim=128).name != HashingEmbedder().name


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dim": 4},
        {"dim": 3.5},
    ],
)
def test_hashing_bad_params(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        HashingEmbedder(**kwargs)


def test_bad_texts() -> None:
    e = HashingEmbedder(dim=16)
    with pytest.raises(TypeError):
        e.embed_documents("not a list")
    with pytest.raises(TypeError):
        e.embed_documents(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        e.embed_query(None)  # type: ignore[arg-type]


def test_make_embedder() -> None:
    assert isinstance(make_embedder("hashing", dim=32), HashingEmbedder)
    e = HashingEmbedder(dim=16)
    assert make_embedder(e) is e
    with pytest.raises(ValueError, match="unknown embedder"):
        make_embedder("word2vec")
    with pytest.raises(TypeError):
        make_embedder(object())  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        make_embedder("fastembed", model_path="/nonexistent/model")


def test_fastembed_minilm_offline(minilm_dir) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    e = FastEmbedEmbedder(model_path=minilm_dir)
    v = e.embed_documents(
        ["The cat sits on the mat.", "A cat is sitting on a mat.", "Stock markets fell sharply."]
    )
    assert v.shape == (3, 384) and e.dim == 384 and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert v[0] @ v[1] > 0.7 > v[0] @ v[2]
    np.testing.assert_allclose(e.embed_query("The cat sits on the mat."), v[0], atol=1e-5)


# ---------------------------------------------------------------- embedders by name
@pytest.fixture
def shared_minilm():
    """The shared MiniLM folder, found from the working directory (skips when absent)."""
    from memlab.datasets import shared_path

    path = shared_path("minilm", required=False)
    if path is None:
        pytest.skip("shared MiniLM model folder not available")
    return path


def test_fastembed_names_parse() -> None:
    e = make_embedder("fastembed:nomic-ai/nomic-embed-text-v1.5")
    assert isinstance(e, FastEmbedEmbedder)
    assert e.name == "fastembed:nomic-ai/nomic-embed-text-v1.5"
    assert (e.query_prefix, e.document_prefix) == ("search_query: ", "search_document: ")
    mini = make_embedder("fastembed")
    assert mini.name == "fastembed:sentence-transformers/all-MiniLM-L6-v2"
    assert (mini.query_prefix, mini.document_prefix) == ("", "")
    with pytest.raises(ValueError, match="names no model"):
        make_embedder("fastembed:")
    with pytest.raises(ValueError, match="does not list the model"):
        make_embedder("fastembed:no-such/model")


def test_every_prefixed_model_is_listed_by_fastembed() -> None:
    from memlab.embed import MODEL_PREFIXES, fastembed_models

    listed = fastembed_models()
    assert listed["nomic-ai/nomic-embed-text-v1.5"] == 768
    assert set(MODEL_PREFIXES) <= set(listed)


def test_model_not_on_the_machine_is_a_clear_offline_error(tmp_path) -> None:
    from memlab.embed import ModelNotAvailableError

    e = make_embedder("fastembed:nomic-ai/nomic-embed-text-v1.5", cache_dir=tmp_path)
    with pytest.raises(ModelNotAvailableError, match="not available offline") as info:
        _ = e.dim
    assert str(tmp_path) in str(info.value)
    assert "memlab models pull nomic-ai/nomic-embed-text-v1.5" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # nothing was downloaded into the cache
    with pytest.raises(ModelNotAvailableError, match="not available offline"):
        e.embed_query("anything")


def test_store_refuses_an_unavailable_model(tmp_path) -> None:
    from memlab.embed import ModelNotAvailableError
    from memlab.store import MemoryStore

    with pytest.raises(ModelNotAvailableError):
        MemoryStore(
            tmp_path / "m.db",
            embedder=FastEmbedEmbedder("nomic-ai/nomic-embed-text-v1.5", cache_dir=tmp_path),
        )


def test_fastembed_prefixes_are_applied(shared_minilm) -> None:
    plain = make_embedder(
        "fastembed:sentence-transformers/all-MiniLM-L6-v2", model_path=shared_minilm
    )
    prefixed = FastEmbedEmbedder(model_path=shared_minilm)
    prefixed.query_prefix, prefixed.document_prefix = "search_query: ", "search_document: "
    text = "The deploy key rotates every Monday."
    np.testing.assert_allclose(
        prefixed.embed_documents([text])[0],
        plain.embed_documents(["search_document: " + text])[0],
        atol=1e-6,
    )
    np.testing.assert_allclose(
        prefixed.embed_query(text), plain.embed_query("search_query: " + text), atol=1e-6
    )
    # without prefixes (MiniLM), query_embed and passage_embed give the same vector
    np.testing.assert_allclose(plain.embed_query(text), plain.embed_documents([text])[0], atol=1e-6)
    assert not np.allclose(prefixed.embed_query(text), prefixed.embed_documents([text])[0])


def test_store_records_a_named_fastembed_model(tmp_path, shared_minilm) -> None:
    from memlab.store import MemoryStore

    name = "fastembed:sentence-transformers/all-MiniLM-L6-v2"
    with MemoryStore(
        tmp_path / "m.db", embedder=make_embedder(name, model_path=shared_minilm)
    ) as store:
        store.ingest("The staging database moved to port 5433.")
        stats = store.stats()
        assert (stats["embedder"], stats["dim"]) == (name, 384)
        hits = store.search("which port does staging use", mark_accessed=False)
        assert hits and "5433" in hits[0].memory.content


# ---------------------------------------------------------------- memlab models pull / list
@contextlib.contextmanager
def model_hub(folder, repo: str):
    """A stand-in of the model hub on loopback serving ``folder``'s files as the repo ``repo``:
    the few endpoints huggingface_hub's snapshot download asks (model info, file tree, files)."""
    files = {p.name: p for p in folder.iterdir() if p.is_file()}
    commit = hashlib.sha1(repo.encode()).hexdigest()
    oids = {name: hashlib.sha1(p.read_bytes()).hexdigest() for name, p in files.items()}
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            asked.append(self.path)

        def send(self, body: bytes, **headers: str) -> None:
            self.send_response(200)
            for key, value in {"Content-Length": str(len(body)), **headers}.items():
                self.send_header(key, value)
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(body)

        def do_GET(self) -> None:
            path = urllib.parse.unquote(urllib.parse.urlparse(self.path).path)
            info = {"id": repo, "sha": commit, "siblings": [{"rfilename": n} for n in files]}
            tree = [
                {"type": "file", "path": n, "size": p.stat().st_size, "oid": oids[n]}
                for n, p in files.items()
            ]
            name = path.rsplit("/", 1)[-1]
            if path == f"/api/models/{repo}" or path.startswith(f"/api/models/{repo}/revision/"):
                self.send(json.dumps(info).encode())
            elif path.startswith(f"/api/models/{repo}/tree/"):
                self.send(json.dumps(tree).encode())
            elif path.startswith(f"/{repo}/resolve/") and name in files:
                body = files[name].read_bytes()
                self.send(body, ETag=f'"{oids[name]}"', **{"X-Repo-Commit": commit})
            else:
                self.send_error(404)

        do_HEAD = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


def test_models_pull_downloads_from_the_hub_and_the_model_then_loads_offline(
    tmp_path, shared_minilm
) -> None:
    from memlab.embed import cached_models

    name = "sentence-transformers/all-MiniLM-L6-v2"
    cache = tmp_path / "cache"
    assert name not in cached_models(cache)
    with model_hub(shared_minilm, "Qdrant/all-MiniLM-L6-v2-onnx") as (endpoint, asked):
        env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
        env["HF_ENDPOINT"] = endpoint
        run = subprocess.run(
            [sys.executable, "-m", "memlab.cli", "models", "pull", name, "--cache-dir", str(cache)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert run.returncode == 0, run.stderr
    assert any(path.endswith("/model.onnx") for path in asked)  # it came from the stand-in
    assert cached_models(cache) == [name]
    pulled = FastEmbedEmbedder(name, cache_dir=cache)  # offline, from the cache
    local = FastEmbedEmbedder(name, model_path=shared_minilm)
    text = "The nightly backup runs at 02:00 UTC."
    np.testing.assert_allclose(pulled.embed_query(text), local.embed_query(text), atol=1e-6)
    listed = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "models", "list", "--cache-dir", str(cache)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = next(row for row in listed.stdout.splitlines() if row.startswith(name + " "))
    assert "yes" in line.split()


def test_models_pull_without_network_is_a_clear_error(tmp_path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "models", "pull", "BAAI/bge-small-en-v1.5"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    assert run.stderr.strip().startswith("memlab models pull: error: cannot download")
    assert "Traceback" not in run.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "models", "pull", "no-such/model"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "memlab models list" in bad.stderr


def test_models_pull_into_a_file_names_the_file_not_the_network(
    tmp_path, monkeypatch, capsys
) -> None:
    # a --cache-dir that is a file is the user's mistake, not an unreachable model hub
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no download is tried either way
    taken = tmp_path / "taken"
    taken.write_text("mine")
    assert main(["models", "pull", "BAAI/bge-small-en-v1.5", "--cache-dir", str(taken)]) == 2
    err = capsys.readouterr().err
    assert f"cache folder {taken} is a file" in err and "HF_HUB_OFFLINE" not in err
    assert taken.read_text() == "mine"


def test_models_list_names_the_shared_minilm(tmp_path, minilm_dir) -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "models", "list", "--cache-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    minilm = "sentence-transformers/all-MiniLM-L6-v2"
    line = next(row for row in listed.stdout.splitlines() if row.startswith(minilm + " "))
    assert line.split()[2:] == ["shared", "(default)"]  # here, from the shared folder


@pytest.mark.parametrize("files", [(), ("model.onnx",)])
def test_folder_that_is_not_a_model_is_a_clear_error(tmp_path, files) -> None:
    from memlab.embed import ModelNotAvailableError

    for name in files:
        (tmp_path / name).write_bytes(b"not an onnx graph")
    e = make_embedder("fastembed", model_path=tmp_path)
    with pytest.raises(ModelNotAvailableError, match="cannot load it from the folder") as info:
        e.embed_query("anything")
    assert str(tmp_path) in str(info.value) and "model.onnx" in str(info.value)
