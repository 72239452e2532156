# A small CPU-bound script with a known call tree, profiled by make.sh.
def leaf(n):
    s = 0
    for i in range(n):
        s += i * 7 % 13
    return s
def parse(): return leaf(200000)
def merge(): return leaf(400000)
t = 0
for k in range(30):
    t += parse() if k & 1 else merge()
print(t)
