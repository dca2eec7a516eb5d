#!/usr/bin/env python3
# tests/netns/chaos_plan.py: the fault schedule of recon_chaos.sh as a pure function of a seed — node kills (SIGKILL of the whole tree), restarts and link cuts (a 2/3 or other partition, an isolated node), one line per fault: "SECONDS ACTION ARGS".
#
#   chaos_plan.py SEED SECONDS NODES
#
# At most two nodes are down at once and one cut is in force at a time; a
# node stays down 3 to 20 s, a cut lasts 3 to 15 s. At SECONDS every node
# still down is started and the links are healed, so the schedule ends
# on a whole cluster. The same arguments always print the same lines.
import random
import sys


def plan(seed, secs, nodes):
    rng = random.Random(seed)
    down = {}  # node -> when it went down
    cut = None  # when the cut in force began
    out = []
    t = rng.uniform(2, 4)
    while t < secs:
        up = [i for i in range(1, nodes + 1) if i not in down]
        may_start = [i for i, at in down.items() if t - at >= 3]
        must_start = [i for i, at in down.items() if t - at >= 20]
        choices = []
        if must_start:
            choices = [("start", must_start[0])]
        elif cut is not None and t - cut >= 15:
            choices = [("heal", None)]
        else:
            if len(down) < 2 and len(up) > 3:
                choices += [("kill", None)] * 3
            if may_start:
                choices += [("start", None)] * 3
            if cut is None:
                choices += [("partition", None)] * 2 + [("isolate", None)]
            elif t - cut >= 3:
                choices += [("heal", None)] * 2
        if not choices:
            t += rng.uniform(1, 3)
            continue
        what, arg = rng.choice(choices)
        if what == "kill":
            arg = rng.choice(up)
            down[arg] = t
            out.append((t, "kill", str(arg)))
        elif what == "start":
            arg = arg if arg is not None else rng.choice(sorted(may_start))
            del down[arg]
            out.append((t, "start", str(arg)))
        elif what == "partition":
            order = list(range(1, nodes + 1))
            rng.shuffle(order)
            k = rng.choice([2, 2, 1])  # mostly 2/3, sometimes 1/4
            a, b = sorted(order[:k]), sorted(order[k:])
            cut = t
            out.append((t, "partition", ",".join(map(str, a)) + " " +
                        ",".join(map(str, b))))
        elif what == "isolate":
            cut = t
            out.append((t, "isolate", str(rng.randint(1, nodes))))
        else:
            cut = None
            out.append((t, "heal", ""))
        t += rng.uniform(2, 6)
    for i in sorted(down):
        out.append((secs, "start", str(i)))
    if cut is not None:
        out.append((secs, "heal", ""))
    return out


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: chaos_plan.py SEED SECONDS NODES\n")
        sys.exit(2)
    seed, secs, nodes = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    for t, what, arg in plan(seed, secs, nodes):
        print(("%.1f %s %s" % (t, what, arg)).rstrip())


main()
