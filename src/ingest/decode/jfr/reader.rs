//! The JFR file as it is laid out: each chunk's header, the metadata event (the types every
//! value is read by), the constant pools that name frames, and the cursor that reads values by
//! their types, checking every size, count and offset against the bytes that are there.

use rustc_hash::{FxHashMap, FxHashSet};

/// The magic bytes that start every chunk.
pub(super) const MAGIC: &[u8; 4] = b"FLR\0";
/// Bytes of a chunk header.
pub(super) const HEADER: usize = 68;
/// Deepest nesting of types in a value (the JDK's types nest 3 or 4 deep).
const MAX_NESTING: u32 = 32;
/// Event type ids of the metadata and constant-pool events.
pub(super) const METADATA_EVENT: i64 = 0;
pub(super) const CONSTANT_POOL_EVENT: i64 = 1;

/// A reading error: what went wrong and at which byte of the (decompressed) file.
pub(super) struct Error {
    pub(super) at: usize,
    pub(super) what: String,
}

pub(super) type Result<T> = std::result::Result<T, Error>;

pub(super) fn err<T>(at: usize, what: impl Into<String>) -> Result<T> {
    Err(Error { at, what: what.into() })
}

/// A string value: absent, inline, or a reference into the `java.lang.String` pool.
#[derive(Clone, Debug)]
pub(super) enum Str {
    Null,
    Inline(String),
    Pool(i64),
}

/// A value read by its type.
#[derive(Clone, Debug)]
pub(super) enum Value {
    /// Every integer type, `char` and `boolean`.
    Int(i64),
    /// `float` and `double`, read past (no graph needs one).
    Float,
    Str(Str),
    /// A constant-pool reference (a field marked `constantPool`).
    Ref(i64),
    Object(Vec<Value>),
    Array(Vec<Value>),
}

impl Value {
    pub(super) fn int(&self) -> Option<i64> {
        match *self {
            Value::Int(v) | Value::Ref(v) => Some(v),
            _ => None,
        }
    }
}

/// Primitive types, by their names in the metadata.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Primitive {
    Int,
    Long,
    Short,
    Byte,
    Char,
    Boolean,
    Float,
    Double,
    String,
}

fn primitive(name: &str) -> Option<Primitive> {
    Some(match name {
        "int" => Primitive::Int,
        "long" => Primitive::Long,
        "short" => Primitive::Short,
        "byte" => Primitive::Byte,
        "char" => Primitive::Char,
        "boolean" => Primitive::Boolean,
        "float" => Primitive::Float,
        "double" => Primitive::Double,
        "java.lang.String" => Primitive::String,
        _ => return None,
    })
}

/// A field of a type.
#[derive(Debug)]
pub(super) struct Field {
    name: String,
    /// Index of its type in [`Types::classes`], or `None` when the id names no type (an error
    /// only if a value of it is read).
    class: Option<usize>,
    type_id: i64,
    constant_pool: bool,
    array: bool,
}

/// A type of the chunk's metadata.
#[derive(Debug)]
pub(super) struct Class {
    pub(super) name: String,
    primitive: Option<Primitive>,
    pub(super) fields: Vec<Field>,
}

impl Class {
    pub(super) fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

/// The types of one chunk.
#[derive(Debug, Default)]
pub(super) struct Types {
    pub(super) classes: Vec<Class>,
    pub(super) by_id: FxHashMap<i64, usize>,
}

impl Types {
    fn by_name(&self, name: &str) -> Option<(i64, usize)> {
        self.by_id.iter().find(|(_, &i)| self.classes[i].name == name).map(|(&id, &i)| (id, i))
    }
}

/// A position in the file, with the end of what may be read from it.
pub(super) struct Cursor<'a> {
    pub(super) data: &'a [u8],
    pub(super) pos: usize,
    pub(super) end: usize,
    pub(super) compressed: bool,
    /// Values read so far, and how many may be.
    pub(super) work: &'a mut u64,
    pub(super) max_work: u64,
}

impl<'a> Cursor<'a> {
    /// The bytes left before the end of the part being read (none when the cursor is past it).
    fn left(&self) -> usize {
        self.end.min(self.data.len()).saturating_sub(self.pos)
    }

    fn need(&self, n: usize) -> Result<()> {
        // `pos` can be past `end`: an event's size is read before the event is bounded by it,
        // and a size smaller than its own varint ends the event behind the cursor (found by
        // coverage-guided fuzzing: the subtraction wrapped and the read went past the file).
        let left = self.left();
        if n > left {
            return err(self.pos, format!("{n} bytes needed, {left} left in this part of the recording"));
        }
        Ok(())
    }

    fn u8(&mut self) -> Result<u8> {
        self.need(1)?;
        let b = self.data[self.pos];
        self.pos += 1;
        Ok(b)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        self.need(N)?;
        let mut b = [0; N];
        b.copy_from_slice(&self.data[self.pos..self.pos + N]);
        self.pos += N;
        Ok(b)
    }

    /// A LEB128 integer of up to 9 bytes, the ninth giving all its 8 bits (JFR's compressed
    /// integers; not zigzag).
    fn varint(&mut self) -> Result<i64> {
        let mut value: u64 = 0;
        for i in 0..8 {
            let b = self.u8()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value as i64);
            }
        }
        Ok((value | u64::from(self.u8()?) << 56) as i64)
    }

    pub(super) fn int(&mut self) -> Result<i64> {
        if self.compressed {
            Ok(self.varint()? as i32 as i64)
        } else {
            Ok(i32::from_be_bytes(self.fixed()?) as i64)
        }
    }

    pub(super) fn long(&mut self) -> Result<i64> {
        if self.compressed {
            self.varint()
        } else {
            Ok(i64::from_be_bytes(self.fixed()?))
        }
    }

    fn short(&mut self) -> Result<i64> {
        if self.compressed {
            Ok(self.varint()? as i16 as i64)
        } else {
            Ok(i16::from_be_bytes(self.fixed()?) as i64)
        }
    }

    /// A count or length, which must be at most the bytes left (each item takes one at least,
    /// except items of a type without fields, which the work bound covers).
    fn count(&mut self) -> Result<usize> {
        let at = self.pos;
        let n = self.int()?;
        let left = self.left();
        if n < 0 || n as usize > left {
            return err(at, format!("a count of {n}, but {left} bytes are left"));
        }
        Ok(n as usize)
    }

    fn string(&mut self) -> Result<Str> {
        let at = self.pos;
        match self.u8()? {
            0 => Ok(Str::Null),
            1 => Ok(Str::Inline(String::new())),
            2 => Ok(Str::Pool(self.long()?)),
            3 => {
                let n = self.count()?;
                let s = String::from_utf8_lossy(&self.data[self.pos..self.pos + n]).into_owned();
                self.pos += n;
                Ok(Str::Inline(s))
            }
            4 => {
                let n = self.count()?;
                let mut units = Vec::with_capacity(n);
                for _ in 0..n {
                    units.push(self.int()? as u16);
                }
                Ok(Str::Inline(String::from_utf16_lossy(&units)))
            }
            5 => {
                let n = self.count()?;
                let s = self.data[self.pos..self.pos + n].iter().map(|&b| char::from(b)).collect();
                self.pos += n;
                Ok(Str::Inline(s))
            }
            e => err(at, format!("unknown string encoding {e}")),
        }
    }

    fn tick(&mut self) -> Result<()> {
        *self.work += 1;
        if *self.work > self.max_work {
            return err(self.pos, format!("more than {} values for a file of this size: refused as corrupt", self.max_work));
        }
        Ok(())
    }

    /// Reads a value of type `class` (a field's own value when `constant_pool` is false).
    fn value(&mut self, types: &Types, class: usize, depth: u32) -> Result<Value> {
        self.tick()?;
        let c = &types.classes[class];
        if let Some(p) = c.primitive {
            return self.primitive(p);
        }
        if depth >= MAX_NESTING {
            return err(self.pos, format!("types nest deeper than {MAX_NESTING} (is type {} its own field?)", c.name));
        }
        let mut fields = Vec::with_capacity(c.fields.len());
        for f in &c.fields {
            fields.push(self.field(types, f, depth + 1)?);
        }
        Ok(Value::Object(fields))
    }

    pub(super) fn field(&mut self, types: &Types, f: &Field, depth: u32) -> Result<Value> {
        if f.array {
            let n = self.count()?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(self.single(types, f, depth)?);
            }
            Ok(Value::Array(items))
        } else {
            self.single(types, f, depth)
        }
    }

    fn single(&mut self, types: &Types, f: &Field, depth: u32) -> Result<Value> {
        if f.constant_pool {
            self.tick()?;
            return Ok(Value::Ref(self.long()?));
        }
        let Some(class) = f.class else {
            return err(self.pos, format!("field {} has type id {}, which the metadata does not describe", f.name, f.type_id));
        };
        self.value(types, class, depth)
    }

    fn primitive(&mut self, p: Primitive) -> Result<Value> {
        Ok(match p {
            Primitive::Int => Value::Int(self.int()?),
            Primitive::Long => Value::Int(self.long()?),
            Primitive::Short => Value::Int(self.short()?),
            Primitive::Char => Value::Int(self.short()? & 0xffff),
            Primitive::Byte | Primitive::Boolean => Value::Int(self.u8()? as i8 as i64),
            Primitive::Float => {
                self.fixed::<4>()?;
                Value::Float
            }
            Primitive::Double => {
                self.fixed::<8>()?;
                Value::Float
            }
            Primitive::String => Value::Str(self.string()?),
        })
    }
}

/// An element of the metadata event's tree.
struct Element {
    name: u32,
    attributes: Vec<(u32, u32)>,
    children: Vec<Element>,
}

fn element(c: &mut Cursor, strings: &[String], depth: u32) -> Result<Element> {
    if depth >= MAX_NESTING {
        return err(c.pos, format!("metadata elements nest deeper than {MAX_NESTING}"));
    }
    c.tick()?;
    let index = |c: &mut Cursor| -> Result<u32> {
        let at = c.pos;
        let i = c.int()?;
        if i < 0 || i as usize >= strings.len() {
            return err(at, format!("metadata string {i} out of range (there are {})", strings.len()));
        }
        Ok(i as u32)
    };
    let name = index(c)?;
    let n = c.count()?;
    let mut attributes = Vec::new();
    for _ in 0..n {
        attributes.push((index(c)?, index(c)?));
    }
    let n = c.count()?;
    let mut children = Vec::new();
    for _ in 0..n {
        children.push(element(c, strings, depth + 1)?);
    }
    Ok(Element { name, attributes, children })
}

/// Reads the metadata event at `c.pos` into the chunk's types.
pub(super) fn metadata(c: &mut Cursor) -> Result<Types> {
    let start = c.pos;
    let size = c.int()?;
    if size <= 0 || size as usize > c.end - start {
        return err(start, format!("the metadata event's size {size} goes past the end of its chunk"));
    }
    c.end = start + size as usize;
    let kind = c.long()?;
    if kind != METADATA_EVENT {
        return err(start, format!("the chunk's metadata offset points to an event of type {kind}, not metadata"));
    }
    c.long()?; // start time
    c.long()?; // duration
    c.long()?; // metadata id
    let n = c.count()?;
    let mut strings = Vec::new();
    for _ in 0..n {
        strings.push(match c.string()? {
            Str::Inline(s) => s,
            Str::Null => String::new(),
            Str::Pool(_) => return err(c.pos, "a metadata string refers to the constant pool"),
        });
    }
    let root = element(c, &strings, 0)?;
    let s = |i: u32| strings[i as usize].as_str();
    let attribute = |e: &Element, key: &str| e.attributes.iter().find(|(k, _)| s(*k) == key).map(|(_, v)| s(*v));
    let mut types = Types::default();
    let mut pending: Vec<Vec<(String, i64, bool, bool)>> = Vec::new();
    for m in root.children.iter().filter(|e| s(e.name) == "metadata") {
        for class in m.children.iter().filter(|e| s(e.name) == "class") {
            let id = attribute(class, "id").and_then(|v| v.parse::<i64>().ok());
            let (Some(id), Some(name)) = (id, attribute(class, "name")) else {
                return err(start, "a type of the metadata has no id or no name");
            };
            let mut fields = Vec::new();
            for f in class.children.iter().filter(|e| s(e.name) == "field") {
                let type_id = attribute(f, "class").and_then(|v| v.parse::<i64>().ok());
                let (Some(field_name), Some(type_id)) = (attribute(f, "name"), type_id) else {
                    return err(start, format!("a field of type {name} has no name or no type"));
                };
                let cp = attribute(f, "constantPool") == Some("true");
                let array = attribute(f, "dimension").is_some_and(|d| d != "0");
                fields.push((field_name.to_string(), type_id, cp, array));
            }
            if types.by_id.insert(id, types.classes.len()).is_some() {
                return err(start, format!("two types of the metadata have id {id}"));
            }
            types.classes.push(Class { name: name.to_string(), primitive: primitive(name), fields: Vec::new() });
            pending.push(fields);
        }
    }
    for (i, fields) in pending.into_iter().enumerate() {
        types.classes[i].fields = fields
            .into_iter()
            .map(|(name, type_id, constant_pool, array)| Field {
                name,
                class: types.by_id.get(&type_id).copied(),
                type_id,
                constant_pool,
                array,
            })
            .collect();
    }
    Ok(types)
}

/// The constant pools of a chunk that name frames.
#[derive(Default)]
pub(super) struct Pools {
    /// `jdk.types.Symbol`: its string.
    symbols: FxHashMap<i64, Str>,
    /// `java.lang.String`.
    strings: FxHashMap<i64, Str>,
    /// `java.lang.Class`: the symbol of its name.
    pub(super) classes: FxHashMap<i64, i64>,
    /// `jdk.types.Method`: its class and the symbol of its name.
    pub(super) methods: FxHashMap<i64, (i64, i64)>,
    /// `jdk.types.StackTrace`: truncated, and its methods, leaf first.
    pub(super) stacks: FxHashMap<i64, (bool, Vec<i64>)>,
    /// `jdk.types.ThreadState`: its name (`STATE_RUNNABLE`, `STATE_SLEEPING`, …), resolved once
    /// the whole chain is read (its strings may come later in it), not at every sample.
    pub(super) thread_states: FxHashMap<i64, String>,
}

impl Pools {
    pub(super) fn string(&self, s: &Str) -> Option<String> {
        match s {
            Str::Null => None,
            Str::Inline(s) => Some(s.clone()),
            Str::Pool(i) => match self.strings.get(i)? {
                Str::Inline(s) => Some(s.clone()),
                _ => None,
            },
        }
    }

    pub(super) fn symbol(&self, id: i64) -> Option<String> {
        self.string(self.symbols.get(&id)?)
    }
}

/// Reads the chain of constant-pool events of a chunk, from the last one back.
pub(super) fn constant_pools(c: &mut Cursor, chunk: (usize, usize), first: usize, types: &Types) -> Result<Pools> {
    let mut pools = Pools::default();
    // Thread states as read, their names resolved at the end.
    let mut states: FxHashMap<i64, Str> = FxHashMap::default();
    let mut seen = FxHashSet::default();
    let mut at = first;
    let idx = |name: &str| types.by_name(name).map(|(_, i)| i);
    let (symbol, string, class, method, stack, frame, thread_state) = (
        idx("jdk.types.Symbol"),
        idx("java.lang.String"),
        idx("java.lang.Class"),
        idx("jdk.types.Method"),
        idx("jdk.types.StackTrace"),
        idx("jdk.types.StackFrame"),
        idx("jdk.types.ThreadState"),
    );
    let field = |class: Option<usize>, name: &str| class.and_then(|c| types.classes[c].field(name));
    let symbol_string = field(symbol, "string");
    let class_name = field(class, "name");
    let (method_type, method_name) = (field(method, "type"), field(method, "name"));
    let (stack_truncated, stack_frames) = (field(stack, "truncated"), field(stack, "frames"));
    let frame_method = field(frame, "method");
    let state_name = field(thread_state, "name");
    loop {
        if at < chunk.0 + HEADER || at >= chunk.1 || !seen.insert(at) {
            return err(at, "the constant pools' chain points outside its chunk or back to itself");
        }
        c.pos = at;
        c.end = chunk.1;
        let size = c.int()?;
        if size <= 0 || size as usize > chunk.1 - at {
            return err(at, format!("a constant-pool event's size {size} goes past the end of its chunk"));
        }
        c.end = at + size as usize;
        let kind = c.long()?;
        if kind != CONSTANT_POOL_EVENT {
            return err(at, format!("the constant pools' chain points to an event of type {kind}"));
        }
        c.long()?; // start time
        c.long()?; // duration
        let delta = c.long()?;
        c.u8()?; // flush
        let n = c.count()?;
        for _ in 0..n {
            let type_at = c.pos;
            let type_id = c.long()?;
            let Some(&ci) = types.by_id.get(&type_id) else {
                return err(type_at, format!("a constant pool of type id {type_id}, which the metadata does not describe"));
            };
            let count = c.count()?;
            for _ in 0..count {
                let key = c.long()?;
                let value = c.value(types, ci, 0)?;
                let get = |i: Option<usize>| match (&value, i) {
                    (Value::Object(f), Some(i)) => f.get(i),
                    _ => None,
                };
                let ci = Some(ci);
                if ci == symbol {
                    if let Some(Value::Str(s)) = get(symbol_string) {
                        pools.symbols.entry(key).or_insert_with(|| s.clone());
                    }
                } else if ci == string {
                    if let Value::Str(s) = &value {
                        pools.strings.entry(key).or_insert_with(|| s.clone());
                    }
                } else if ci == class {
                    if let Some(name) = get(class_name).and_then(Value::int) {
                        pools.classes.entry(key).or_insert(name);
                    }
                } else if ci == method {
                    let class = get(method_type).and_then(Value::int).unwrap_or(0);
                    let name = get(method_name).and_then(Value::int).unwrap_or(0);
                    pools.methods.entry(key).or_insert((class, name));
                } else if ci == stack {
                    let truncated = get(stack_truncated).and_then(Value::int).unwrap_or(0) != 0;
                    let methods = match get(stack_frames) {
                        Some(Value::Array(frames)) => frames
                            .iter()
                            .map(|f| match (f, frame_method) {
                                (Value::Object(f), Some(i)) => f.get(i).and_then(Value::int).unwrap_or(0),
                                (Value::Ref(m), None) => *m,
                                _ => 0,
                            })
                            .collect(),
                        _ => Vec::new(),
                    };
                    pools.stacks.entry(key).or_insert((truncated, methods));
                } else if ci == thread_state {
                    if let Some(Value::Str(s)) = get(state_name) {
                        states.entry(key).or_insert_with(|| s.clone());
                    }
                }
            }
        }
        if delta == 0 {
            pools.thread_states = states.iter().filter_map(|(&k, s)| Some((k, pools.string(s)?))).collect();
            return Ok(pools);
        }
        at = match (at as i64).checked_add(delta) {
            Some(next) if next >= 0 => next as usize,
            _ => return err(at, format!("the constant pools' chain has an offset {delta} out of range")),
        };
    }
}

/// One chunk's header.
pub(super) struct Header {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) constant_pools: usize,
    pub(super) metadata: usize,
    pub(super) start_nanos: i64,
    pub(super) duration_nanos: i64,
    pub(super) ticks_per_second: i64,
    pub(super) compressed: bool,
}

pub(super) fn header(data: &[u8], at: usize, number: usize) -> Result<Header> {
    let left = data.len() - at;
    if left < HEADER {
        return err(at, format!("the file ends inside the header of chunk {number} (truncated?)"));
    }
    let h = &data[at..at + HEADER];
    if &h[..4] != MAGIC {
        return err(at, format!("chunk {number} does not start with the JFR magic bytes"));
    }
    let be64 = |o: usize| i64::from_be_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    let (major, minor) = (u16::from_be_bytes([h[4], h[5]]), u16::from_be_bytes([h[6], h[7]]));
    if !(1..=2).contains(&major) {
        return err(at + 4, format!("JFR format version {major}.{minor} is not read (versions 1 and 2 are, as JDK 9 and later write them)"));
    }
    let size = be64(8);
    if size == 0 {
        return err(at + 8, format!("chunk {number} was not finished (its size is 0): the recording was still being written"));
    }
    if size < HEADER as i64 || size as u64 > left as u64 {
        return err(at + 8, format!("chunk {number} claims {size} bytes, but {left} are left in the file (truncated?)"));
    }
    let size = size as usize;
    let offset = |o: usize, what: &str| -> Result<usize> {
        let v = be64(o);
        if v < HEADER as i64 || v as u64 >= size as u64 {
            return err(at + o, format!("chunk {number}'s {what} offset {v} is outside the chunk ({size} bytes; 0: not finished)"));
        }
        Ok(at + v as usize)
    };
    let constant_pools = offset(16, "constant pool")?;
    let metadata = offset(24, "metadata")?;
    let features = i32::from_be_bytes(h[64..68].try_into().expect("4 bytes"));
    Ok(Header {
        start: at,
        end: at + size,
        constant_pools,
        metadata,
        start_nanos: be64(32),
        duration_nanos: be64(40),
        ticks_per_second: be64(56),
        compressed: features & 1 != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::super::decode;
    use super::*;
    use crate::config::Limits;

    #[test]
    fn compressed_integers_take_all_eight_bits_of_their_ninth_byte() {
        let mut work = 0;
        let bytes = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x85, 0xb0, 0x03];
        let mut c = Cursor { data: &bytes, pos: 0, end: bytes.len(), compressed: true, work: &mut work, max_work: 10 };
        assert_eq!(c.long().ok(), Some(-1));
        assert_eq!(c.long().ok(), Some(55301));
        let e = c.long().expect_err("the end");
        assert_eq!(e.at, 12);
    }

    #[test]
    fn an_event_whose_size_is_smaller_than_its_own_size_field_is_an_error_not_a_panic() {
        // Found by coverage-guided fuzzing (scripts/libfuzz.sh, target jfr): the metadata
        // event's size, 0x30 after a 9-byte varint of 0xff bytes, ends the event behind the
        // cursor; the bytes left were reckoned as `end - pos`, which wrapped, and the next read
        // went past the end of the 88-byte file.
        let file = b"\x46\x4c\x52\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x48\x00\x00\x00\x00\x00\x00\x00\x44\x00\x00\x00\x00\x00\x00\x00\x44\x9b\x00\x00\x00\x00\x00\x00\x00\x48\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x44\x00\x00\x01\x00\x00\x00\x00\xff\x30\xff\xff\xef\x73\x6c\x09\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x48\x00\x00\x00\x00\x00\x00";
        let e = decode(&mut &file[..], &Limits::default()).expect_err("a damaged recording");
        assert!(e.contains("bytes needed") || e.contains("left"), "{e}");
        let mut work = 0;
        let mut c = Cursor { data: &file[..], pos: 10, end: 4, compressed: true, work: &mut work, max_work: 10 };
        assert_eq!(c.left(), 0);
        assert!(c.u8().is_err());
    }
}
