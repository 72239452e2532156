# A small program for austin to sample: a hot loop under two callers.
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def hot():
    return leaf(20000)


def cool():
    time.sleep(0.002)


def main():
    t = time.time()
    while time.time() - t < 0.4:
        hot()
        cool()


main()
