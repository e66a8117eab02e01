"""Gaia inner split: the first 80 % of kept jobs (by submit time) re-split chronologically; the outer test part never read."""
import sys
import numpy as np
sys.path.insert(0, "/work/main")
from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.analysis.runtime_eval import kept_jobs, split_jobs
from hpcds1mpi.surrogates.submit_features import submit_features, submit_times
from hpcds1mpi.surrogates.job_runtime import RuntimePredictor
table = read_job_log("/work/shared/data/joblogs/UniLu-Gaia-2014-1.swf.gz")[0].reset_index(drop=True)
kept = kept_jobs(table)
train, test = split_jobs(table, kept, "chronological")
first = submit_times(table).iloc[test[0]]
inner = table[(submit_times(table) < first).to_numpy()].reset_index(drop=True)
args = dict(a.split("=") for a in sys.argv[1:])
modes = args.get("modes", "gated,validate,single,choice").split(",")
kept = kept_jobs(inner); feats = submit_features(inner)
tr, te = split_jobs(inner, kept, "chronological")
run = inner["runtime_s"].to_numpy(float); sub = submit_times(inner).to_numpy()
for mode in modes:
    m = RuntimePredictor(choose=mode).fit(feats.iloc[tr], run[tr], order=sub[tr])
    p = m.predict(feats.iloc[te]); a = run[te]
    acc = float(np.mean(np.minimum(p, a) / np.maximum(p, a)))
    print(mode, m.mode_, round(acc, 4), {k: (round(v, 4) if isinstance(v, float) else v) for k, v in m.validation_.items()}, flush=True)
cands = m._candidates(feats.iloc[te]); y = np.log(run[te])
acc = np.exp(-np.abs(cands - y[:, None]))
print("per candidate", dict(zip(m.candidates_, np.round(acc.mean(0), 4))), "oracle", round(float(acc.max(1).mean()), 4))
