import time
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def work():
    for _ in range(30):
        leaf(200000)
def idle():
    time.sleep(0.3)
def main():
    work()
    idle()
    work()
main()
