"""Session 25 experiment: fit the shipped predictor on a log's inner, second inner or outer chronological split
(outer, "inner", "inner2") and pickle what the walltime experiments need. Usage: LOG outer|inner|inner2 OUT.pkl;
COV=0.98 in the environment sets the coverage the shipped walltime is fitted at."""
import sys, pickle, time
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.analysis.runtime_eval import kept_jobs, split_jobs
from hpcds1mpi.surrogates.submit_features import submit_features, submit_times
from hpcds1mpi.surrogates.job_runtime import RuntimePredictor
from hpcds1mpi.surrogates.walltime_model import novel_mask
log, which, out = sys.argv[1:4]
t0 = time.time()
table = read_job_log(log)[0].reset_index(drop=True)
for _ in range({"inner": 1, "inner2": 2}.get(which, 0)):
    kept = kept_jobs(table)
    tr, te = split_jobs(table, kept, "chronological")
    first = submit_times(table).iloc[te[0]]
    table = table[(submit_times(table) < first).to_numpy()].reset_index(drop=True)
kept = kept_jobs(table); feats = submit_features(table)
tr, te = split_jobs(table, kept, "chronological")
run = table["runtime_s"].to_numpy(float); sub = submit_times(table).to_numpy()
print("features", time.time() - t0, flush=True)
import os
m = RuntimePredictor(coverage=float(os.environ.get("COV", "0.95"))).fit(feats.iloc[tr], run[tr], order=sub[tr])
print("fit", time.time() - t0, flush=True)
# the calibration slice as fit() made it
idx = tr[np.argsort(sub[tr], kind="stable")]
idx = idx[np.isfinite(run[idx]) & (run[idx] > 0)]
n_cal = m.n_calibration_
cal = idx[-n_cal:]
fc, ft = feats.iloc[cal], feats.iloc[te]
d = {}
for name, f, ix in (("cal", fc, cal), ("test", ft, te)):
    x = m._matrix(f)
    d[name] = dict(x=x, y=np.log(run[ix]), lim=np.log(m._limit(f)), novel=novel_mask(f),
                   user=f["user"].to_numpy() if "user" in f else None)
d["cal"]["point"] = m.cal_point_
d["test"]["point"] = np.log(m.predict(ft))
w, tight = m.walltime_tight(ft)
d["test"]["shipped_wall"] = np.log(w); d["test"]["shipped_tight"] = tight
d["describe"] = m.walltime_.describe()
pickle.dump(d, open(out, "wb"))
y = d["test"]["y"]
print("shipped", np.mean(y > d["test"]["shipped_wall"] + 1e-12), np.median(np.exp(d["test"]["shipped_wall"] - y)), time.time() - t0)
