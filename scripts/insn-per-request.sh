#!/bin/bash
# Instructions per request of a built svc, counted by callgrind: the same
# count whatever the machine's load, unlike CPU time (BENCHMARKS.md, run N).
# svc runs in jwt mode on TCP loopback as bench/suite starts it; loadgen
# (-c 1) warms it up, then the counters are zeroed and dumped after N and
# after 2N more requests: the second dump less the first, over N, is one
# request (each loadgen run's setup and token fetch cancel out). Costs are
# summed per symbol by instruction address (callgrind's per-function split
# is unreliable for Go). Package runtime is printed apart: its scheduler
# and GC work follows wall time under valgrind and varies from run to run.
#
#   scripts/insn-per-request.sh [-n N] [-s SCENARIO] [-top K] NAME=SVC_BINARY...
#
# Needs valgrind, python3 and go; builds loadgen from this tree. With two
# builds, the K symbols whose cost changed most are listed.
set -euo pipefail
N=2000; SCEN=get; TOP=40
while [[ $# -gt 0 && $1 == -* ]]; do
	case $1 in -n) N=$2 ;; -s) SCEN=$2 ;; -top) TOP=$2 ;; *) echo "unknown flag $1" >&2; exit 2 ;; esac
	shift 2
done
[[ $# -ge 1 ]] || { echo "usage: $0 [-n N] [-s SCENARIO] [-top K] NAME=SVC_BINARY..." >&2; exit 2; }
cd "$(dirname "$0")/.."
TMP=$(mktemp -d /tmp/insn.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/loadgen" ./bench/loadgen
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/signing.pem" 2>/dev/null
SECRET=$(openssl rand -hex 24)
ARGS=()
for nb in "$@"; do
	name=${nb%%=*}; bin=$(readlink -f "${nb#*=}")
	# Below the kernel's ephemeral range, as internal/freeport picks.
	port=$((20000 + RANDOM % 5000))
	(
		export SVC_IAM_MODE=jwt SVC_JWT_SIGNING_KEY_FILE=$TMP/signing.pem SVC_BOOTSTRAP_CLIENT_ID=insn \
			SVC_BOOTSTRAP_CLIENT_SECRET=$SECRET SVC_STORAGE_BACKEND=memory SVC_HTTP_PORT=$port \
			SVC_ADMIN_PORT=$((port + 1)) SVC_GRPC_PORT=$((port + 2)) SVC_SUPPRESS_BANNER=true SVC_LOG_LEVEL=warn
		# Go's asynchronous preemption signals make callgrind abort.
		GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --dump-instr=yes --compress-pos=no \
			--compress-strings=no --callgrind-out-file="$TMP/$name.cg" "$bin" >"$TMP/$name.log" 2>&1 &
		vp=$!
		trap 'kill $vp 2>/dev/null || true' EXIT
		for _ in $(seq 600); do
			kill -0 $vp || { cat "$TMP/$name.log" >&2; exit 1; }
			curl -fs "http://127.0.0.1:$port/api/health" >/dev/null 2>&1 && break
			sleep 0.5
		done
		export LOADGEN_CLIENT_ID=insn LOADGEN_CLIENT_SECRET=$SECRET
		lg() { "$TMP/loadgen" -url "http://127.0.0.1:$port/api" -scenario "$SCEN" -c 1 -n "$1" -d 1h >>"$TMP/$name.lg" 2>&1; }
		lg 300
		callgrind_control -z $vp >/dev/null 2>&1
		lg "$N"
		callgrind_control -d $vp >/dev/null 2>&1
		lg $((2 * N))
		callgrind_control -d $vp >/dev/null 2>&1
	)
	ARGS+=("$name" "$bin" "$TMP/$name.cg")
done
echo "scenario $SCEN, $N requests per difference; $(uptime)"
python3 - "$N" "$TOP" "${ARGS[@]}" <<'PY'
import bisect, collections, re, subprocess, sys
n, top, rest = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
def symtab(b):
    out = subprocess.run(["go", "tool", "nm", "-n", b], capture_output=True, text=True, check=True).stdout
    s, names = [], []
    for line in out.splitlines():
        p = line.split(None, 2)
        if len(p) == 3 and p[1] in "TtR":
            s.append(int(p[0], 16)); names.append(p[2])
    return s, names
def addrs(f):
    c, skip = collections.Counter(), False
    for line in open(f):
        if skip:
            skip = False
        elif line.startswith("calls="):
            skip = True  # the next line is the call's inclusive cost
        elif line.startswith("0x"):
            p = line.split(); c[int(p[0], 16)] += int(p[2])
    return c
builds = []
for i in range(0, len(rest), 3):
    name, b, cg = rest[i:i + 3]
    s, names = symtab(b); a1, a2 = addrs(cg + ".1"), addrs(cg + ".2")
    d = collections.Counter()
    for a in set(a1) | set(a2):
        j = bisect.bisect_right(s, a) - 1
        d[names[j] if j >= 0 else "(outside the binary)"] += (a2[a] - a1[a]) / n
    rt = sum(v for k, v in d.items() if k.startswith("runtime.") or k.startswith("(outside"))
    tot = sum(d.values())
    print("%-12s instructions per request: %7.0f total, %7.0f outside package runtime, %7.0f in runtime" % (name, tot, tot - rt, rt))
    builds.append((name, d))
if len(builds) >= 2:
    norm = lambda k: re.sub(r"\.func\d+(\.\d+)*", ".funcN", k)
    (na, a), (nb, b) = builds[0], builds[1]
    A, B = collections.Counter(), collections.Counter()
    for k, v in a.items(): A[norm(k)] += v
    for k, v in b.items(): B[norm(k)] += v
    print("\n%9s %9s %8s  symbol (outside runtime)" % (na, nb, "change"))
    keys = [k for k in set(A) | set(B) if not k.startswith("runtime.")]
    for k in sorted(keys, key=lambda k: -abs(B[k] - A[k]))[:top]:
        print("%9.0f %9.0f %+8.0f  %s" % (A[k], B[k], B[k] - A[k], k[:140]))
PY
