"""Session 25 experiment (not shipped): per-job multi-factor walltime allocation (a Lagrangian over
the factors K and "keep the request") against the shipped gate, on pickles written by
walltime_allocation_fit.py. Usage: walltime_allocation.py PKL [budget=0.05] [safety=0.8] [K=1.35,...]"""
import sys, pickle
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
from hpcds1mpi.surrogates.walltime_gate import gate_matrix
from lightgbm import LGBMClassifier
d = pickle.load(open(sys.argv[1], "rb"))
OPT = dict(a.split("=") for a in sys.argv[2:])
BUDGET, SAFETY = float(OPT.get("budget", 0.05)), float(OPT.get("safety", 0.8))
REFIT = OPT.get("refit", "0") == "1"
K = np.array([float(v) for v in OPT.get("K", "1.0,1.25,1.5,1.75,2.0,2.5,3.0,4.0,6.0").split(",")])
T = np.array([0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 6.0])
c, t = d["cal"], d["test"]
n = len(c["y"]); cut = int(n * 2 / 3)
xm_c = gate_matrix(c["x"], c["point"], c["lim"]); xm_t = gate_matrix(t["x"], t["point"], t["lim"])
r = c["y"] - c["point"]
S_ch, S_te = [], []
for th in T:
    lab = (r > np.log(th)).astype(int)
    clf = LGBMClassifier(n_estimators=150, learning_rate=0.05, num_leaves=31, min_child_samples=50,
                         max_bin=63, verbose=-1, n_jobs=1, random_state=0).fit(xm_c.iloc[:cut], lab[:cut])
    S_ch.append(clf.predict_proba(xm_c.iloc[cut:])[:, 1])
    if REFIT:
        clf = LGBMClassifier(n_estimators=150, learning_rate=0.05, num_leaves=31, min_child_samples=50,
                         max_bin=63, verbose=-1, n_jobs=1, random_state=0).fit(xm_c, lab)
    S_te.append(clf.predict_proba(xm_t)[:, 1])
def mono(S):
    S = np.column_stack(S)
    return np.minimum.accumulate(S, axis=1)
S_ch, S_te = mono(S_ch), mono(S_te)
lT = np.log(T)
def surv(S, logt):  # per job P(r > t), t per job (log)
    out = np.empty(len(logt))
    for j in range(len(logt)):
        out[j] = np.interp(logt[j], lT, S[j])
    return out
def tables(S, p, lim, M):
    """per job, per option (K..., request): (log wall, P good, P kill)"""
    walls, good, kill = [], [], []
    for k in list(K) + [None]:
        w = lim.copy() if k is None else np.minimum(p + np.log(k), lim)
        capped = w >= lim - 1e-12
        pk = np.where(capped, 0.0, surv(S, w - p))
        pg = surv(S, w - np.log(M) - p)
        walls.append(w); good.append(pg); kill.append(pk)
    return np.column_stack(walls), np.column_stack(good), np.column_stack(kill)
def pick(W, G, Kp, lam, novel_keep):
    ch = np.argmax(G - lam * Kp, axis=1)
    w = W[np.arange(len(ch)), ch]
    return np.where(novel_keep, W[:, -1], w)
def score(w, y):
    return float(np.mean(y > w + 1e-12)), float(np.median(np.exp(w - y)))
yc = c["y"][cut:]; pc = c["point"][cut:]; lc = c["lim"][cut:]
keep_novel = d["describe"]["novel"]["k"] is None
nk_c = (c["novel"][cut:] & np.isfinite(lc)) if keep_novel else np.zeros(len(yc), bool)
nk_t = (t["novel"] & np.isfinite(t["lim"])) if keep_novel else np.zeros(len(t["y"]), bool)
def choose(lo, hi):
    best = None
    for M in (1.5, 2.0, 2.5, 3.0, 4.0, 5.0):
        Wc, Gc, Kc = tables(S_ch[lo:hi], pc[lo:hi], lc[lo:hi], M)
        for lam in np.exp(np.linspace(np.log(0.05), np.log(200), 120)):
            kill, over = score(pick(Wc, Gc, Kc, lam, nk_c[lo:hi]), yc[lo:hi])
            if kill <= BUDGET * SAFETY and (best is None or over < best[0]):
                best = (over, kill, M, lam)
    return best
h = len(yc) // 2
b = choose(0, h)
if b is None:
    print("transfer: nothing fits on the older half")
else:
    Wn, Gn, Kn = tables(S_ch[h:], pc[h:], lc[h:], b[2])
    print("transfer: chosen on older half over %.3f kill %.4f; newer half kill %.4f over %.3f" % ((b[0], b[1]) + score(pick(Wn, Gn, Kn, b[3], nk_c[h:]), yc[h:])))
best = None
for M in (1.5, 2.0, 2.5, 3.0, 4.0, 5.0):
    Wc, Gc, Kc = tables(S_ch, pc, lc, M)
    for lam in np.exp(np.linspace(np.log(0.05), np.log(200), 120)):
        wc = pick(Wc, Gc, Kc, lam, nk_c)
        kill, over = score(wc, yc)
        h = len(yc) // 2
        newer = score(wc[h:], yc[h:])[0] if OPT.get("newer", "0") == "1" else 0
        if kill <= BUDGET * SAFETY and newer <= BUDGET * SAFETY and (best is None or over < best[0]):
            best = (over, kill, M, lam)
print("chosen on choose part: over %.3f kill %.4f M %.2f lam %.3f" % best)
over, kill, M, lam = best
Wt, Gt, Kt = tables(S_te, t["point"], t["lim"], M)
wt = pick(Wt, Gt, Kt, lam, nk_t)
print("test: kill %.4f over %.3f" % score(wt, t["y"]))
print("shipped on test: kill %.4f over %.3f" % score(t["shipped_wall"], t["y"]), d["describe"]["gate"])
# the whole curve on test (descriptive only)
for lam2 in (lam / 4, lam / 2, lam, lam * 2, lam * 4):
    print("  test at lam %.3f: kill %.4f over %.3f" % ((lam2,) + score(pick(Wt, Gt, Kt, lam2, nk_t), t["y"])))
