# %% [markdown]
# # 04 · A memory store tour
#
# `memlab.store.MemoryStore` is SQLite (the truth) + FTS5 (BM25 keyword search) + annoy (vector
# search), running the models of notebook 01 for real: every search hit that clears a relevance test
# is an FSRS-6 review and a dual-strength access, ingest goes through the prediction-error gate, and
# forgetting is a heat-based sweep that archives and compresses but never silently loses a text.
#
# Everything here runs on a **simulated clock** (`%memlab now`, `%memlab advance`) so the outputs are
# the same on every run. The embedder is the real MiniLM model, loaded offline from the shared folder;
# without it the tour falls back to the hashing embedder and says so (its cells are tagged `needs-shared`:
# what the gate and search print depends on the embedder).

# %%
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import pandas as pd

from memlab.progress import set_progress

set_progress(False)
pd.set_option("display.width", 140)
pd.set_option("display.max_colwidth", 70)
%load_ext memlab

# %% tags=["needs-shared"]
from memlab.datasets import shared_path

MINILM = shared_path("minilm", required=False)
EMBEDDER = "fastembed" if MINILM else "hashing"
print(
    "embedder: MiniLM (fastembed, offline)"
    if MINILM
    else "MiniLM not found (no shared folder): falling back to the hashing embedder"
)

# %% tags=["needs-shared"]
%memlab now 2026-01-05T09:00Z
%memlab open :memory: --embedder {EMBEDDER}
store = memlab_store  # noqa: F821 (set by %memlab open)
print(repr(store))

# %% [markdown]
# ## Ingest
# `%%remember` stores a cell's text (each line with `--lines`), with project, topics, layer and
# importance. Every text is compared with its nearest memory of the same project by the gate.

# %% tags=["needs-shared"]
%%remember --lines --project infra --topics deploy,ops --entity deploy
The deploy script lives in ops/deploy.sh and needs the VPN.
Deploys to production happen on Tuesdays after the standup.
Rollbacks use ops/rollback.sh with the previous release tag.

# %% tags=["needs-shared"]
%%remember --lines --project infra --topics backup,database --entity backup
The nightly backup of the orders database runs at 02:00 UTC.
Backups are kept for 30 days in the cold storage bucket.

# %% tags=["needs-shared"]
%%remember --project backend --topics style --layer learning
Alice prefers tabs over spaces in the Go services, and reviews every PR touching the billing code.

# %% tags=["needs-shared"]
%%remember --project infra --topics database,migrations --layer caveat --importance 0.9
Never run schema migrations on the orders database on a Friday.

# %% [markdown]
# ## The gate: reinforce, supersede, related or create
# The gate is lossless. The same note again is a REINFORCE (an access of the stored memory; the
# text kept as an observation, metadata merged upward). A revision of a fact (a changed number,
# date or negation) SUPERSEDEs it: a new memory, the old one kept as a version with status
# `superseded`. A similar but different fact (here the note extended by "and a 2FA token") is
# RELATED: a new memory linked to its neighbour, both stay in search. A new fact is a CREATE.
# A revision in other words (the last text: the backups' 30 days become 90, with another verb and
# no revision word) is RELATED: both texts stay in search, search ranks the newer first and flags
# the older as possibly outdated by it (below; a language model can judge such revisions,
# `Gate(judged_by=...)`; docs/concepts/gating.md says why no offline rule replaces). The caveat stored above ("Never run schema migrations on the orders
# database ...", a rule, not a new time of the orders database's backup) was a CREATE.

# %% tags=["needs-shared"]
%memlab advance 2h
results = store.ingest_many(
    [
        "The deploy script lives in ops/deploy.sh and needs the VPN.",
        "The deploy script lives in ops/deploy.sh and needs the VPN and a 2FA token.",
        "The nightly backup of the orders database now runs at 03:00 UTC.",
        "The staging cluster runs Kubernetes 1.31.",
        "The cold storage bucket holds backups for 90 days.",
    ],
    project="infra",
)
pd.DataFrame(
    [
        {**r.to_dict(), "similarity": None if r.similarity is None else round(r.similarity, 3)}
        for r in results
    ]
)

# %% [markdown]
# The third text is a *correction* (02:00 → 03:00), nearly the same words as the original: a
# similarity gate alone would file it by its similarity (printed below), as a repetition above the
# reinforce threshold, and keep the old time. The gate's guard sees that a number changed (a
# negation that changes counts too), so the correction SUPERSEDEs the memory: the current memory
# says 03:00, the 02:00 one stays findable as its older version (`store.versions`,
# `include_history=True`).
# (Notebook 03 measures the gate's thresholds on STS-B.)

# %% tags=["needs-shared"]
backup_id = results[2].memory_id
print(
    f"the correction: similarity {results[2].similarity:.3f} to the original "
    f"({'above' if results[2].similarity > store.gate.reinforce else 'below'} the reinforce "
    f"threshold {store.gate.reinforce}), decision {results[2].decision.value}"
)
print("stored content:", store.get(backup_id).content)
store.versions(backup_id)[["memory_id", "content", "status"]]

# %% tags=["needs-shared"]
store.get(results[1].memory_id)

# %% tags=["needs-shared"]
%recall how long are backups kept -k 2 --preview

# %% [markdown]
# ## Search, and why each hit ranked
# Hybrid search fuses the BM25 and vector rankings by reciprocal rank fusion (`rrf = Σ 1/(60+rank)`),
# then weights by FSRS-6 retention and context match: `score = rrf · time_factor · context`.
# Hits come in the order of their scores, except that of two hits the search takes for versions of
# one fact the newer goes just ahead: below, #8 (which the gate linked to #1 as RELATED) is first
# with a slightly lower score.

# %% tags=["needs-shared"]
%recall how do I deploy -k 3 --preview

# %% [markdown]
# Context (Tulving's encoding specificity): the same query with different context topics re-ranks
# towards what was encoded in that context (project and topics re-rank; they never filter). The
# scores rise with the context; the order does too, except between hits the search pairs as
# possible versions of one fact (linked by the gate, or with vectors at least
# `SearchOptions.versions_at` = 0.3 similar, a loose test that pairs neighbouring facts too): the
# newer stays just ahead. Here it pairs #9 (the backup's new time) with the older caveat #7, a
# different fact about the same database, so #7 stays second even where the context gives it the
# higher score; `SearchOptions(versions_at=1.0)` pairs only the gate's links.

# %% tags=["needs-shared"]
contexts = {
    "no context": "",
    "topic backup": "--topics backup",
    "topic migrations": "--topics migrations",
}
columns = {}
for name, options in contexts.items():  # noqa: B007 (used by %recall)
    hits = %recall orders database -k 3 --preview {options}
    columns[name] = [f"#{h.memory.id} ×{h.context:.2f} {h.score:.5f}" for h in hits]
pd.DataFrame(columns, index=pd.RangeIndex(1, 4, name="rank"))

# %% [markdown]
# ## The testing effect
# Search strengthens the hits that clear its relevance test (unless `--preview`). Two memories learnt together: one is
# recalled on days 1, 3 and 7, the other never. A month later:

# %% tags=["needs-shared"]
rollback = store.search("rollback previous release tag", k=1, mark_accessed=False)[0].memory.id
tuesday = store.search("production deploys on Tuesdays", k=1, mark_accessed=False)[0].memory.id
for step in ("1d", "2d", "4d"):  # noqa: B007 (used by %memlab advance)
    %memlab advance {step}
    hit = %recall rollback previous release tag -k 1
    assert hit[0].memory.id == rollback
%memlab advance 23d
frame = store.to_dataframe().set_index("id")
frame.loc[
    [rollback, tuesday],
    ["content", "access_count", "stability", "retention", "accessibility", "state"],
].round(3)

# %% [markdown]
# ## Synaptic tagging
# Flagging a memory important strengthens the memories encoded shortly before it (9 h) and after
# it (2 h), more the closer they are — and memories that *arrive* in the forward window are tagged
# on arrival.

# %% tags=["needs-shared"]
%memlab now 2026-02-10T09:00Z
day = [
    store.ingest("Bob is moving the CI runners to the new rack.", project="infra", topics=["ci"]),
]
%memlab advance 3h
day.append(store.ingest("The CI runners' new rack is in room B2.", project="infra", topics=["ci"]))
%memlab advance 5h
flagged = store.ingest(
    "Outage: the CI runners lost power during the move.", project="infra", topics=["ci"]
)
tagged = store.importance(flagged.memory_id)
tagged.round(3)

# %% tags=["needs-shared"]
%memlab advance 1h
later = store.ingest("Power to room B2 is back; runners are green.", project="infra", topics=["ci"])
%memlab advance 3h
outside = store.ingest("Lunch order for Friday: pizza.", project="infra")
print(f"arrived 1 h after the flagged memory: tagged by {later.tagged}")
print(f"arrived 4 h after it (outside the 2 h window): tagged by {outside.tagged}")
store.to_dataframe().set_index("id").loc[
    [r.memory_id for r in day] + [flagged.memory_id, later.memory_id, outside.memory_id],
    ["content", "importance", "stability"],
].round(3)

# %% [markdown]
# ## Forgetting: a sweep
# Four months later, a sweep assesses every active memory with the heat model: heat, band, the
# forgetting risk, protection, and the action (keep / compress / drop). `%memlab sweep` is a dry run
# unless `--apply`.

# %% tags=["needs-shared"]
%memlab advance 120d
sweep = %memlab sweep
for band, ids in sweep.groupby("band").groups.items():
    print(f"{band}: {sorted(ids)}")
print("kept:", sorted(sweep.index[sweep["action"] == "keep"]))
sweep

# %% [markdown]
# Heat follows use: a memory recalled in its first week has grown its FSRS-6 stability and cools
# more slowly than the notes nobody used — but the risk also grows with the days since the last
# access, so a warm memory can still be dropped (archived). Protected memories (a caveat, an
# importance of 0.9 or more) are always kept; the `reason` column says why. The importance of a
# memory nobody gave one is estimated from its text. Tagging by the outage raised its neighbours'
# importance and stability: the stabilities of #12, #13 and #15 are 2.69 to 3.12 days, that of an
# untagged new memory such as #16 2.31 (the table above).
#
# A *budget* decides differently: it keeps a share (or a count) of the memories, the best by a named
# keep score, and archives the rest. The default keep score (`memlab`, the posterior need) starts
# from the content's importance and lets real uses decide; the laws and simple baselines are there
# to compare (a dry run: nothing changes):

# %% tags=["needs-shared"]
contents = store.to_dataframe().set_index("id")["content"]
budgets = {
    name: store.forget_sweep(keep=0.5, keep_by=name).set_index("id")["action"].ne("drop")
    for name in ("memlab", "fsrs6", "recency", "idf")
}
kept_half = pd.DataFrame(budgets).assign(content=contents).set_index("content")
print(f"memories kept by a 50 % budget (of {len(kept_half)} active):", kept_half.sum().to_dict())
kept_half

# %% tags=["needs-shared"]
%memlab sweep --apply
pd.Series(store.stats()["by_status"], name="memories")

# %% [markdown]
# Dropped memories are archived, not deleted: they stay searchable with `--archived` and can be
# restored with `store.restore(id)`.

# %% tags=["needs-shared"]
archived = store.to_dataframe().query("status == 'archived'")
print(f"{len(archived)} archived; still found by an archive search:")
%recall Bob rack --archived -k 2 --preview

# %% [markdown]
# ## Consolidation
# Cold, unprotected memories about the same entity and layer merge into one `learning` memory made
# of their most central sentences; the members it holds whole are archived with a link to it (one
# with a sentence left out stays active).

# %% tags=["needs-shared"]
%memlab now 2027-01-05T09:00Z
for text in (
    "The billing service retries failed card charges three times.",
    "Billing retries use exponential backoff starting at one minute.",
    "After the third failed retry the billing service emails the customer.",
):
    store.ingest(
        text, project="backend", entity="billing-retries", layer="implementation", importance=0.2
    )
%memlab advance 60d
new_ids = store.consolidate()
summary = store.get(new_ids[0])
members = store.to_dataframe().query("consolidated_into == @new_ids[0]")
print("archived members:", members["id"].tolist(), "statuses:", sorted(set(members["status"])))
print("summary:", summary.content)
summary

# %% [markdown]
# ## Browse
# The store browser: a query box, the hits with their score parts, and the state shares.

# %% tags=["nbval-ignore-output"]
from memlab.notebook.widgets import StoreBrowser

browser = StoreBrowser(store, k=5)
browser

# %% tags=["needs-shared"]
browser.search("backup orders database")
print(
    browser.results[["id", "score", "rrf", "keyword_rank", "vector_rank", "retention"]]
    .round(4)
    .to_string()
)
print(browser.state_shares.round(3).to_dict())

# %% tags=["needs-shared"]
%memlab stats

# %% [markdown]
# ## References
#
# * **FSRS**: J. Ye, J. Su and Y. Cao, *A Stochastic Shortest Path Algorithm for Optimizing Spaced Repetition Scheduling*, KDD 2022; FSRS-6 weights and bounds from py-fsrs 6.3.2 (https://github.com/open-spaced-repetition/py-fsrs).
# * **Ebbinghaus**: H. Ebbinghaus, *Über das Gedächtnis*, Leipzig: Duncker & Humblot, 1885 (trans. *Memory: A Contribution to Experimental Psychology*, 1913); savings fitted as `100k / ((log10 t)^c + k)` with k = 1.84, c = 1.25, t in minutes.
# * **Dual strength**: R. A. Bjork and E. L. Bjork, *A new theory of disuse and an old theory of stimulus fluctuation*, in A. Healy et al. (eds.), *From Learning Processes to Cognitive Processes*, vol. 2, Erlbaum, 1992, pp. 35–67.
# * **Encoding specificity**: E. Tulving and D. M. Thomson, *Encoding specificity and retrieval processes in episodic memory*, Psychological Review 80(5), 1973, 352–373.
# * **Synaptic tagging**: U. Frey and R. G. M. Morris, *Synaptic tagging and long-term potentiation*, Nature 385, 1997, 533–536.
# * **Testing effect**: H. L. Roediger and J. D. Karpicke, *Test-enhanced learning: taking memory tests improves long-term retention*, Psychological Science 17(3), 2006, 249–255.
# * **RRF**: G. V. Cormack, C. L. A. Clarke and S. Büttcher, *Reciprocal rank fusion outperforms Condorcet and individual rank learning methods*, SIGIR 2009, 758–759 (`score = Σ 1/(60 + rank)`).
# * **MiniLM**: W. Wang et al., *MiniLM: Deep Self-Attention Distillation for Task-Agnostic Compression of Pre-Trained Transformers*, NeurIPS 2020; the sentence embedder `sentence-transformers/all-MiniLM-L6-v2` (N. Reimers and I. Gurevych, *Sentence-BERT*, EMNLP 2019; Apache-2.0), run offline through fastembed.
# * The agent-memory servers whose ideas memlab runs: Vestige (FSRS-6, the 0.92 / 0.75 gate) and Linksee Memory (heat bands, forgetting risk, protection rules).
