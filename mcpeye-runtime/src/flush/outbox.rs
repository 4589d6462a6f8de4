//! The outbox (opt-in, [`Config::outbox_dir`](crate::Config::outbox_dir)): a bounded on-disk log
//! of the encoded events that are not delivered yet, so that events survive the process being
//! killed and are sent at the next start. Only the flusher thread touches it.
//!
//! The flusher appends each event as it encodes it, before it can be sent, and settles it once
//! it is sent or dropped; [`Outbox::commit`] writes both in one `write` per drain or batch. When
//! nothing is left to deliver, the log is cut back to its header; when settled records make up
//! more than half of it, the live ones are copied to a new log that replaces it (rename), so its
//! size stays within about twice the bound. Nothing is `fsync`ed: a process that is killed loses
//! nothing written, a machine that loses power may.
//!
//! Layout of a directory: slots `outbox-N.lock` / `outbox-N.log`, N from 0. A process takes the
//! first slot whose lock file it can lock (so several servers may share one directory), and
//! adopts the logs of the slots nobody holds (those of processes that died). Lock files are never
//! removed: a lock on a file that was unlinked would not exclude anyone.
//!
//! A log is an 8-byte header, then records: `u32` length of the body, `u32` CRC-32 of the body,
//! the body. An event body is `1`, the `u16` length of the client label, the label, the encoded
//! event; a settlement body is `2` and the `u64` offsets of the event records it settles (all
//! little-endian). Reading stops at the first record that is cut short or fails its checksum (a
//! write torn by the kill): what follows it is dropped, the events before it are kept.
//!
//! Delivery is at least once: an event sent just before the kill, whose settlement was not
//! written yet, is sent again at the next start, with the same bytes and so the same `callId`.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// First bytes of every log; a file that does not start with them is not read.
const MAGIC: &[u8; 8] = b"MCPEYEO1";
/// Length and checksum before each record body.
const FRAME: u64 = 8;
const EVENT: u8 = 1;
const SETTLED: u8 = 2;
/// Slots per directory: processes sharing one outbox directory at the same time.
const SLOTS: usize = 64;
/// Settled records are only compacted away once they take at least this much room (and a
/// quarter of the bound).
const COMPACT_MIN: u64 = 1024 * 1024;

/// An event read back from a log at start.
pub(crate) struct Recovered {
    /// Its place in the flusher's order: 0 for the oldest.
    pub seq: u64,
    /// The label of the client it was recorded for (`identity.client`).
    pub client: Option<String>,
    /// The encoded event, as it will be sent.
    pub bytes: Vec<u8>,
}

/// Where a live event record sits in the log.
#[derive(Clone, Copy)]
struct Slot {
    offset: u64,
    /// Frame and body.
    size: u64,
}

/// An event appended since the last commit: its record is in `Outbox::unwritten`.
struct Unwritten {
    seq: u64,
    /// Where its record starts in `Outbox::unwritten`.
    start: u64,
    /// Frame and body.
    size: u64,
    /// Settled before it was written (dropped in the drain that added it).
    settled: bool,
}

/// The flusher's outbox: one slot of an outbox directory, locked for this process.
pub(crate) struct Outbox {
    path: PathBuf,
    log: File,
    /// Held for as long as the outbox is open: the slot is this process's.
    _lock: File,
    /// Bytes of the log that hold complete records.
    len: u64,
    /// Live events by sequence number.
    live: BTreeMap<u64, Slot>,
    live_bytes: u64,
    max_bytes: u64,
    /// The records of the events appended since the last commit, framed, ready to write.
    unwritten: Vec<u8>,
    unwritten_events: Vec<Unwritten>,
    /// Offsets settled since the last commit.
    settled: Vec<u64>,
    recovered: Vec<Recovered>,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox").field("path", &self.path).field("live", &self.live.len()).finish()
    }
}

impl Outbox {
    /// Opens (creating it if needed) the outbox directory `dir`: takes a free slot and reads
    /// back the events left in it and in the slots of processes that are gone.
    pub(crate) fn open(dir: &Path, max_bytes: u64) -> io::Result<Outbox> {
        fs::create_dir_all(dir)?;
        let mut mine = None;
        let mut recovered = Vec::new();
        let mut orphans = Vec::new();
        for n in 0..SLOTS {
            let lock_path = dir.join(format!("outbox-{n}.lock"));
            let log_path = dir.join(format!("outbox-{n}.log"));
            if mine.is_some() && !log_path.exists() {
                continue;
            }
            let lock = OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path)?;
            match lock.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => continue,
                Err(TryLockError::Error(e)) => return Err(e),
            }
            recovered.extend(read_log(&log_path)?);
            if mine.is_none() {
                mine = Some((lock, log_path));
            } else {
                // An orphan: its events become ours; its log goes once ours holds them.
                orphans.push((lock, log_path));
            }
        }
        let Some((lock, path)) = mine else {
            return Err(io::Error::other(format!("all {SLOTS} outbox slots are held by other processes")));
        };
        let mut outbox = Outbox {
            log: rewrite(&path, recovered.iter().map(|(c, b)| (c.as_deref(), b.as_slice())))?,
            path,
            _lock: lock,
            len: 0,
            live: BTreeMap::new(),
            live_bytes: 0,
            max_bytes: max_bytes.max(1),
            unwritten: Vec::new(),
            unwritten_events: Vec::new(),
            settled: Vec::new(),
            recovered: Vec::new(),
        };
        // The log now holds exactly these events, one after the other.
        let mut offset = MAGIC.len() as u64;
        for (seq, (client, bytes)) in recovered.into_iter().enumerate() {
            let size = FRAME + event_body_len(client.as_deref(), &bytes) as u64;
            outbox.live.insert(seq as u64, Slot { offset, size });
            outbox.live_bytes += size;
            offset += size;
            outbox.recovered.push(Recovered { seq: seq as u64, client, bytes });
        }
        outbox.len = offset;
        for (_lock, log_path) in orphans {
            remove_if_exists(&log_path)?;
        }
        Ok(outbox)
    }

    /// The events read back at start, oldest first, numbered from 0: they are live under these
    /// numbers, so the caller numbers its next events from their count. Empty after the first call.
    pub(crate) fn take_recovered(&mut self) -> Vec<Recovered> {
        std::mem::take(&mut self.recovered)
    }

    /// Events still to deliver (read back, or appended and not settled).
    #[cfg(test)]
    pub(crate) fn live(&self) -> usize {
        self.live.len() + self.unwritten_events.iter().filter(|u| !u.settled).count()
    }

    /// Events held in the log (written and not settled).
    pub(crate) fn live_len(&self) -> usize {
        self.live.len()
    }

    /// The bound on the live events' bytes.
    pub(crate) fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The first live event at or after `seq`, written.
    pub(crate) fn first_live_from(&self, seq: u64) -> Option<u64> {
        self.live.range(seq..).next().map(|(s, _)| *s)
    }

    /// Reads back up to `max` written live events from `seq` on, oldest first: the flusher's
    /// memory holds only the oldest undelivered events, the others wait here.
    pub(crate) fn read_from(&mut self, seq: u64, max: usize) -> io::Result<Vec<Recovered>> {
        let mut events = Vec::new();
        let mut record = Vec::new();
        for (&s, slot) in self.live.range(seq..).take(max) {
            record.resize(slot.size as usize, 0);
            self.log.seek(SeekFrom::Start(slot.offset))?;
            self.log.read_exact(&mut record)?;
            let body = &record[FRAME as usize..];
            let crc = u32::from_le_bytes([record[4], record[5], record[6], record[7]]);
            let (client, bytes) = Some(body)
                .filter(|b| crc32(b) == crc)
                .and_then(parse_event)
                .ok_or_else(|| io::Error::other("an event record of the outbox log is corrupt"))?;
            events.push(Recovered { seq: s, client, bytes: bytes.to_vec() });
        }
        Ok(events)
    }

    /// Settles every live event from `seq` on (they cannot be read back); returns how many.
    pub(crate) fn settle_from(&mut self, seq: u64) -> usize {
        let seqs: Vec<u64> = self.live.range(seq..).map(|(s, _)| *s).collect();
        for &s in &seqs {
            self.settle(s);
        }
        seqs.len()
    }

    /// Adds an event, written at the next [`commit`](Self::commit).
    pub(crate) fn append(&mut self, seq: u64, client: Option<&str>, bytes: &[u8]) {
        let start = self.unwritten.len() as u64;
        write_event(&mut self.unwritten, client, bytes);
        let size = self.unwritten.len() as u64 - start;
        self.unwritten_events.push(Unwritten { seq, start, size, settled: false });
    }

    /// The event `seq` was delivered or dropped: it need not survive a restart any more.
    pub(crate) fn settle(&mut self, seq: u64) {
        if let Some(slot) = self.live.remove(&seq) {
            self.live_bytes -= slot.size;
            self.settled.push(slot.offset);
        } else if let Some(u) = self.unwritten_events.iter_mut().find(|u| u.seq == seq) {
            // Dropped in the drain that added it: written all the same, and settled with it.
            u.settled = true;
        }
    }

    /// Writes what was appended and settled since the last commit, in one write. Then, if the
    /// live events exceed the byte bound, settles the oldest ones (never the last one left) and
    /// returns their sequence numbers, ascending: the caller drops them. On an error, the log is
    /// cut back to its last complete record and the events of this commit are not in it (they
    /// stay in the caller's memory only).
    pub(crate) fn commit(&mut self) -> io::Result<Vec<u64>> {
        let mut evicted = Vec::new();
        if self.unwritten_events.is_empty() && self.settled.is_empty() {
            return Ok(evicted);
        }
        let mut events = std::mem::take(&mut self.unwritten_events);
        let mut records = std::mem::take(&mut self.unwritten);
        let mut added = records.len() as u64;
        // Over the bound: the oldest go first, the written ones before the new ones; the last
        // event left is kept even if it alone is larger than the bound.
        let mut skip = 0;
        while self.live_bytes + added > self.max_bytes && self.live.len() + events.len() - skip > 1 {
            if let Some(&seq) = self.live.keys().next() {
                self.settle(seq);
                evicted.push(seq);
            } else {
                added -= events[skip].size;
                if !events[skip].settled {
                    evicted.push(events[skip].seq);
                }
                skip += 1;
            }
        }
        let skipped_bytes = events.get(skip).map_or(records.len() as u64, |u| u.start) as usize;
        let mut buf = if skipped_bytes == 0 { records } else { records.split_off(skipped_bytes) };
        let mut slots = Vec::with_capacity(events.len() - skip);
        for u in events.drain(skip..) {
            let offset = self.len + u.start - skipped_bytes as u64;
            if u.settled {
                self.settled.push(offset);
            } else {
                slots.push((u.seq, Slot { offset, size: u.size }));
            }
        }
        // The buffers' allocations are kept for the next drain.
        events.clear();
        self.unwritten_events = events;
        let settled = std::mem::take(&mut self.settled);
        if self.live.is_empty() && slots.is_empty() {
            // Nothing left to deliver: cut the log back to its header instead of writing.
            self.log.set_len(MAGIC.len() as u64)?;
            self.len = MAGIC.len() as u64;
            buf.clear();
            self.unwritten = buf;
            return Ok(evicted);
        }
        if !settled.is_empty() {
            write_record(&mut buf, |body| {
                body.push(SETTLED);
                for offset in &settled {
                    body.extend_from_slice(&offset.to_le_bytes());
                }
            });
        }
        if let Err(e) = self.log.seek(SeekFrom::Start(self.len)).and_then(|_| self.log.write_all(&buf)) {
            // Leave no partial record behind the last good one; these events stay in memory.
            let _ = self.log.set_len(self.len);
            self.settled = settled;
            return Err(e);
        }
        self.len += buf.len() as u64;
        buf.clear();
        self.unwritten = buf;
        for (seq, slot) in slots {
            self.live_bytes += slot.size;
            self.live.insert(seq, slot);
        }
        // Settled records are dead weight; copying the live ones out costs their size, so only
        // when the dead outweigh them, and are large against the bound (a burst that is being
        // delivered settles the rest soon, and then the log is simply cut back).
        let dead = self.len - MAGIC.len() as u64 - self.live_bytes;
        if dead > self.live_bytes && dead >= COMPACT_MIN.max(self.max_bytes / 4) {
            self.compact()?;
        }
        evicted.sort_unstable();
        Ok(evicted)
    }

    /// Replaces the log by one holding only the live events (read back from the log).
    fn compact(&mut self) -> io::Result<()> {
        let mut events = Vec::with_capacity(self.live.len());
        for slot in self.live.values() {
            let mut record = vec![0; slot.size as usize];
            self.log.seek(SeekFrom::Start(slot.offset))?;
            self.log.read_exact(&mut record)?;
            let (client, bytes) =
                parse_event(&record[FRAME as usize..]).ok_or_else(|| io::Error::other("bad record"))?;
            events.push((client, bytes.to_vec()));
        }
        self.log = rewrite(&self.path, events.iter().map(|(c, b)| (c.as_deref(), b.as_slice())))?;
        let mut offset = MAGIC.len() as u64;
        for slot in self.live.values_mut() {
            slot.offset = offset;
            offset += slot.size;
        }
        self.len = offset;
        Ok(())
    }
}

fn event_body_len(client: Option<&str>, bytes: &[u8]) -> usize {
    1 + 2 + client.map_or(0, |c| c.len().min(u16::MAX as usize)) + bytes.len()
}

/// Appends one framed record whose body `fill` writes.
fn write_record(buf: &mut Vec<u8>, fill: impl FnOnce(&mut Vec<u8>)) {
    let start = buf.len();
    buf.extend_from_slice(&[0; FRAME as usize]);
    fill(buf);
    let body = &buf[start + FRAME as usize..];
    let (len, crc) = (body.len() as u32, crc32(body));
    buf[start..start + 4].copy_from_slice(&len.to_le_bytes());
    buf[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// Appends one framed event record.
fn write_event(buf: &mut Vec<u8>, client: Option<&str>, bytes: &[u8]) {
    write_record(buf, |body| {
        let label = client.unwrap_or("").as_bytes();
        let label = &label[..label.len().min(u16::MAX as usize)];
        body.push(EVENT);
        body.extend_from_slice(&(label.len() as u16).to_le_bytes());
        body.extend_from_slice(label);
        body.extend_from_slice(bytes);
    });
}

/// `(client label, event)` of an event body.
fn parse_event(body: &[u8]) -> Option<(Option<String>, &[u8])> {
    let (&kind, rest) = body.split_first()?;
    if kind != EVENT || rest.len() < 2 {
        return None;
    }
    let label_len = u16::from_le_bytes([rest[0], rest[1]]) as usize;
    let label = rest.get(2..2 + label_len)?;
    let label = std::str::from_utf8(label).ok().filter(|l| !l.is_empty()).map(str::to_owned);
    Some((label, &rest[2 + label_len..]))
}

/// The live events of a log, oldest first; nothing if it does not exist or is not a log.
/// Reading stops at the first torn or corrupt record.
fn read_log(path: &Path) -> io::Result<Vec<(Option<String>, Vec<u8>)>> {
    let data = match fs::read(path) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    if !data.starts_with(MAGIC) {
        return Ok(Vec::new());
    }
    let mut events = BTreeMap::new();
    let mut pos = MAGIC.len();
    while let Some(frame) = data.get(pos..pos + FRAME as usize) {
        let len = u32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
        let crc = u32::from_le_bytes([frame[4], frame[5], frame[6], frame[7]]);
        let Some(body) = data.get(pos + FRAME as usize..pos + FRAME as usize + len) else { break };
        if crc32(body) != crc {
            break;
        }
        match body.first() {
            Some(&EVENT) => match parse_event(body) {
                Some((client, bytes)) => {
                    events.insert(pos as u64, (client, bytes.to_vec()));
                }
                None => break,
            },
            Some(&SETTLED) => {
                for offset in body[1..].chunks_exact(8) {
                    let offset = u64::from_le_bytes(offset.try_into().unwrap_or([0; 8]));
                    events.remove(&offset);
                }
            }
            _ => break,
        }
        pos += FRAME as usize + len;
    }
    Ok(events.into_values().collect())
}

/// Writes a log of these events next to `path`, then renames it over `path`; returns it open
/// for appending.
fn rewrite<'a>(path: &Path, events: impl Iterator<Item = (Option<&'a str>, &'a [u8])>) -> io::Result<File> {
    let mut buf = MAGIC.to_vec();
    for (client, bytes) in events {
        write_event(&mut buf, client, bytes);
    }
    let tmp = path.with_extension("log.tmp");
    {
        let mut f = File::create(&tmp)?;
        f.write_all(&buf)?;
    }
    fs::rename(&tmp, path)?;
    OpenOptions::new().read(true).write(true).open(path)
}

fn remove_if_exists(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// CRC-32 (IEEE 802.3, as zlib computes it).
fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary directory, removed when dropped.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("mcpeye-outbox-unit-{}-{name}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            TempDir(dir)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn event(i: u64) -> Vec<u8> {
        format!("{{\"callId\":\"{i}\",\"toolName\":\"t\"}}").into_bytes()
    }

    fn bodies(recovered: &[Recovered]) -> Vec<String> {
        recovered.iter().map(|r| String::from_utf8(r.bytes.clone()).unwrap()).collect()
    }

    #[test]
    fn crc_is_zlibs() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn unsettled_events_come_back_in_order_with_their_client() {
        let dir = TempDir::new("reopen");
        let mut o = Outbox::open(&dir.0, 1 << 20).unwrap();
        assert!(o.take_recovered().is_empty());
        for i in 0..5 {
            o.append(i, if i == 1 { Some("cursor/1.0") } else { None }, &event(i));
        }
        o.settle(2); // settled before it was written: written and settled in one commit
        assert_eq!(o.commit().unwrap(), Vec::<u64>::new());
        o.settle(0);
        o.commit().unwrap();
        assert_eq!(o.live(), 3);
        drop(o);
        let mut o = Outbox::open(&dir.0, 1 << 20).unwrap();
        let back = o.take_recovered();
        assert_eq!(bodies(&back), [event(1), event(3), event(4)].map(|e| String::from_utf8(e).unwrap()));
        assert_eq!(back.iter().map(|r| r.seq).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(back[0].client.as_deref(), Some("cursor/1.0"));
        assert_eq!(back[1].client, None);
        // Settling everything cuts the log back to its header.
        for seq in 0..3 {
            o.settle(seq);
        }
        o.commit().unwrap();
        assert_eq!(fs::metadata(dir.0.join("outbox-0.log")).unwrap().len(), MAGIC.len() as u64);
        drop(o);
        assert!(Outbox::open(&dir.0, 1 << 20).unwrap().take_recovered().is_empty());
    }

    #[test]
    fn a_torn_last_record_is_skipped() {
        let dir = TempDir::new("torn");
        let mut o = Outbox::open(&dir.0, 1 << 20).unwrap();
        for i in 0..3 {
            o.append(i, None, &event(i));
        }
        o.commit().unwrap();
        drop(o);
        let log = dir.0.join("outbox-0.log");
        let full = fs::read(&log).unwrap();
        // Cut inside the last record, then corrupt a byte of it instead: both lose only it.
        fs::write(&log, &full[..full.len() - 3]).unwrap();
        assert_eq!(bodies(&Outbox::open(&dir.0, 1 << 20).unwrap().take_recovered()).len(), 2);
        let mut flipped = full.clone();
        let last = flipped.len() - 2;
        flipped[last] ^= 0xFF;
        fs::write(&log, &flipped).unwrap();
        let back = Outbox::open(&dir.0, 1 << 20).unwrap().take_recovered();
        assert_eq!(bodies(&back), [event(0), event(1)].map(|e| String::from_utf8(e).unwrap()));
        // A file that is not a log is not read.
        fs::write(&log, b"garbage").unwrap();
        assert!(Outbox::open(&dir.0, 1 << 20).unwrap().take_recovered().is_empty());
    }

    #[test]
    fn the_byte_bound_evicts_the_oldest() {
        let dir = TempDir::new("bound");
        let size = FRAME + event_body_len(None, &event(0)) as u64;
        let mut o = Outbox::open(&dir.0, 3 * size).unwrap();
        for i in 0..2 {
            o.append(i, None, &event(i));
        }
        assert!(o.commit().unwrap().is_empty());
        for i in 2..6 {
            o.append(i, None, &event(i));
        }
        assert_eq!(o.commit().unwrap(), [0, 1, 2]);
        assert_eq!(o.live(), 3);
        // One event larger than the bound is kept, alone.
        o.append(6, None, &vec![b'x'; 10 * size as usize]);
        assert_eq!(o.commit().unwrap(), [3, 4, 5]);
        drop(o);
        assert_eq!(Outbox::open(&dir.0, 3 * size).unwrap().take_recovered().len(), 1);
    }

    #[test]
    fn settled_records_are_compacted_away() {
        let dir = TempDir::new("compact");
        let mut o = Outbox::open(&dir.0, 8 << 20).unwrap();
        let big = vec![b'y'; 4096];
        o.append(0, None, &event(0));
        for i in 1..1000 {
            o.append(i, None, &big);
        }
        o.commit().unwrap();
        for i in 1..1000 {
            o.settle(i);
        }
        o.commit().unwrap();
        let len = fs::metadata(dir.0.join("outbox-0.log")).unwrap().len();
        assert!(len < 4096, "compacted to the one live event: {len} bytes");
        o.append(1000, None, &event(1000));
        o.commit().unwrap();
        drop(o);
        let back = Outbox::open(&dir.0, 8 << 20).unwrap().take_recovered();
        assert_eq!(bodies(&back), [event(0), event(1000)].map(|e| String::from_utf8(e).unwrap()));
    }

    #[test]
    fn processes_take_their_own_slot_and_adopt_the_slots_of_the_dead() {
        let dir = TempDir::new("slots");
        let mut a = Outbox::open(&dir.0, 1 << 20).unwrap();
        let mut b = Outbox::open(&dir.0, 1 << 20).unwrap();
        assert!(b.path.ends_with("outbox-1.log"), "{:?}", b.path);
        a.append(0, None, &event(10));
        a.commit().unwrap();
        b.append(0, None, &event(20));
        b.commit().unwrap();
        drop(b);
        // While `a` lives, its slot is not adopted; `b`'s is.
        let mut c = Outbox::open(&dir.0, 1 << 20).unwrap();
        assert_eq!(bodies(&c.take_recovered()), [String::from_utf8(event(20)).unwrap()]);
        drop((a, c));
        let mut d = Outbox::open(&dir.0, 1 << 20).unwrap();
        let mut back = bodies(&d.take_recovered());
        back.sort();
        assert_eq!(back, [event(10), event(20)].map(|e| String::from_utf8(e).unwrap()));
        assert!(!dir.0.join("outbox-1.log").exists());
    }
}
