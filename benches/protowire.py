"""Writing the protobuf wire format by hand (varints, length-delimited fields), for the benches
that make pprof profiles: gen-pprof.py, and the hostile and memory shapes of hostile-decode.sh
and decode-memory.sh (which put this folder on their path). No package is needed.
"""

_SMALL = []


def varint(n):
    if n < len(_SMALL):
        return _SMALL[n]
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [varint(i) for i in range(1 << 14)]


def field_varint(num, value):
    return varint(num << 3) + varint(value) if value else b""


def field_bytes(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def packed(num, values):
    if not values:
        return b""
    return field_bytes(num, b"".join(varint(v) for v in values))
