//! Record framing: gzip members, header blocks, blocks, and resynchronisation.

use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

use flate2::bufread::GzDecoder;

use super::{
    detect_compression, Compression, FileSummary, Limits, Position, ReadError, ReadErrorKind,
    ReadItem, Record, RecordHead, RecordType,
};

/// Gzip magic plus the only compression method (deflate).
const GZIP_MEMBER_START: [u8; 3] = [0x1f, 0x8b, 0x08];
/// A WARC header block longer than this is not a header block.
const MAX_HEADER_BYTES: usize = 256 << 10;

/// A `BufRead` that knows how many bytes it has handed out: record offsets come from here.
struct Counted<B> {
    inner: B,
    pos: u64,
}

impl<B: BufRead> Read for Counted<B> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<B: BufRead> BufRead for Counted<B> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.pos += amt as u64;
    }
}

impl<R: Read + Seek> Counted<BufReader<R>> {
    fn seek_to(&mut self, pos: u64) -> io::Result<()> {
        self.inner.seek(SeekFrom::Start(pos))?;
        self.pos = pos;
        Ok(())
    }
}

/// Counts what is emitted so the summary cannot disagree with the items.
struct Emitter<F> {
    emit: F,
    records: u64,
    errors: u64,
}

impl<F: FnMut(ReadItem)> Emitter<F> {
    fn record(&mut self, record: Record) {
        self.records += 1;
        (self.emit)(ReadItem::Record(record));
    }
    fn error(
        &mut self,
        position: Position,
        kind: ReadErrorKind,
        head: Option<Box<RecordHead>>,
        detail: String,
    ) {
        self.errors += 1;
        (self.emit)(ReadItem::Error(ReadError {
            position,
            kind,
            head,
            detail,
        }));
    }
}

pub(super) fn read_all<R: Read + Seek>(
    input: BufReader<R>,
    limits: &Limits,
    emit: impl FnMut(ReadItem),
) -> io::Result<FileSummary> {
    let mut raw = Counted {
        inner: input,
        pos: 0,
    };
    let mut out = Emitter {
        emit,
        records: 0,
        errors: 0,
    };
    let compression = detect_compression(raw.fill_buf()?);
    let uncompressed_bytes = match compression {
        Compression::None => {
            let place = |pos| Position {
                offset: pos,
                offset_in_member: 0,
            };
            if let SegmentEnd::Abandoned { error, head, at } =
                read_segment(&mut raw, &place, limits, &mut out)
            {
                out.error(place(at), ReadErrorKind::Io, head, error.to_string());
            }
            raw.pos
        }
        Compression::Gzip => read_members(&mut raw, limits, &mut out)?,
    };
    Ok(FileSummary {
        compressed_bytes: raw.pos,
        uncompressed_bytes,
        records: out.records,
        errors: out.errors,
    })
}

/// Reads gzip members one after the other; returns the uncompressed byte count.
fn read_members<R: Read + Seek, F: FnMut(ReadItem)>(
    raw: &mut Counted<BufReader<R>>,
    limits: &Limits,
    out: &mut Emitter<F>,
) -> io::Result<u64> {
    let mut uncompressed = 0u64;
    loop {
        let start = raw.pos;
        let at_start = Position {
            offset: start,
            offset_in_member: 0,
        };
        let first = match fill_from(raw, start) {
            Ok(buf) => buf,
            Err(e) => {
                out.error(at_start, ReadErrorKind::Io, None, e.to_string());
                return Ok(uncompressed);
            }
        };
        if first.is_empty() {
            return Ok(uncompressed);
        }
        if !first.starts_with(&GZIP_MEMBER_START[..first.len().min(3)]) || first.len() < 3 {
            let next = find_member(raw, start + 1)?;
            let end = next.unwrap_or(raw.pos);
            out.error(
                at_start,
                ReadErrorKind::Garbage,
                None,
                format!("{} bytes that are not a gzip member", end - start),
            );
            match next {
                Some(next) => raw.seek_to(next)?,
                None => return Ok(uncompressed),
            }
            continue;
        }

        let place = |pos| Position {
            offset: start,
            offset_in_member: pos,
        };
        let (end, member_bytes) = {
            let mut segment = Counted {
                inner: BufReader::with_capacity(1 << 16, GzDecoder::new(&mut *raw)),
                pos: 0,
            };
            let end = read_segment(&mut segment, &place, limits, out);
            (end, segment.pos)
        };
        uncompressed += member_bytes;
        if let SegmentEnd::Abandoned { error, head, at } = end {
            // The member is unusable from `at` on; what comes after it is found by scanning for
            // the next member header, since a broken deflate stream does not say where it ends.
            let kind = if error.kind() == io::ErrorKind::UnexpectedEof {
                ReadErrorKind::GzipTruncated
            } else {
                ReadErrorKind::GzipCorrupt
            };
            let next = find_member(raw, start + 1)?;
            let skipped = next.unwrap_or(raw.pos) - start;
            out.error(
                place(at),
                kind,
                head,
                format!("{error}; skipped {skipped} compressed bytes to the next member"),
            );
            match next {
                Some(next) => raw.seek_to(next)?,
                None => return Ok(uncompressed),
            }
        }
    }
}

/// The buffered bytes from `start`, the reader's position, at least as many as the gzip magic
/// unless the input ends sooner. A member may start in the last bytes of the reader's buffer,
/// too few to show its magic: then the buffer is dropped and refilled from `start`.
fn fill_from<R: Read + Seek>(raw: &mut Counted<BufReader<R>>, start: u64) -> io::Result<&[u8]> {
    if (1..GZIP_MEMBER_START.len()).contains(&raw.fill_buf()?.len()) {
        raw.seek_to(start)?;
    }
    raw.fill_buf()
}

/// Finds the next plausible gzip member header at or after `from`, leaving the reader at end of
/// input when there is none. Plausible: magic, deflate, and no reserved flag bits set.
fn find_member<R: Read + Seek>(
    raw: &mut Counted<BufReader<R>>,
    from: u64,
) -> io::Result<Option<u64>> {
    let mut window = vec![0u8; 1 << 16];
    let mut pos = from;
    loop {
        raw.seek_to(pos)?;
        let filled = read_up_to(raw, &mut window)?;
        let mut search_from = 0;
        while let Some(i) = memchr::memmem::find(&window[search_from..filled], &GZIP_MEMBER_START) {
            let at = search_from + i;
            match window.get(at + 3) {
                Some(flags) if flags & 0xe0 != 0 => search_from = at + 1,
                // Either valid flags or the flags byte is past this window: try it.
                _ => return Ok(Some(pos + at as u64)),
            }
        }
        if filled < window.len() {
            return Ok(None);
        }
        // Overlap windows so a header split across two of them is still seen.
        pos += (filled - (GZIP_MEMBER_START.len() - 1)) as u64;
    }
}

fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

enum SegmentEnd {
    /// The segment was read to its end (errors inside it were reported and skipped).
    Clean,
    /// The underlying reader failed; nothing more can be read from this segment.
    Abandoned {
        error: io::Error,
        head: Option<Box<RecordHead>>,
        at: u64,
    },
}

enum LineEnd {
    Newline,
    Eof,
    /// The line was longer than allowed; its start was kept, the rest consumed.
    TooLong,
}

/// Appends one line (with its `\n`) to `out`, keeping at most `cap` bytes of it.
fn read_line_capped(
    input: &mut impl BufRead,
    out: &mut Vec<u8>,
    cap: usize,
) -> io::Result<LineEnd> {
    let mut kept = 0usize;
    let mut too_long = false;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(if too_long {
                LineEnd::TooLong
            } else {
                LineEnd::Eof
            });
        }
        let (take, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = cap.saturating_sub(kept).min(take);
        out.extend_from_slice(&buf[..room]);
        kept += room;
        too_long |= room < take;
        input.consume(take);
        if done {
            return Ok(if too_long {
                LineEnd::TooLong
            } else {
                LineEnd::Newline
            });
        }
    }
}

fn is_blank_line(line: &[u8]) -> bool {
    line == b"\r\n" || line == b"\n"
}

/// Reads the records of one segment, reporting each record or error through `out`.
fn read_segment<B: BufRead, F: FnMut(ReadItem)>(
    input: &mut Counted<B>,
    place: &dyn Fn(u64) -> Position,
    limits: &Limits,
    out: &mut Emitter<F>,
) -> SegmentEnd {
    let mut header = Vec::with_capacity(1024);
    loop {
        let search_start = input.pos;
        let abandon = |error, head| SegmentEnd::Abandoned {
            error,
            head,
            at: search_start,
        };
        header.clear();
        // Find the version line, skipping the blank lines that end the previous record and
        // reporting anything else as garbage.
        let mut garbage_from = None;
        let record_start = loop {
            let line_start = input.pos;
            header.clear();
            let end = match read_line_capped(input, &mut header, MAX_HEADER_BYTES) {
                Ok(end) => end,
                Err(e) => return abandon(e, None),
            };
            if header.starts_with(b"WARC/") {
                if let Some(from) = garbage_from {
                    out.error(
                        place(from),
                        ReadErrorKind::Garbage,
                        None,
                        format!("{} bytes between records", line_start - from),
                    );
                }
                break line_start;
            }
            let blank = header.is_empty() || is_blank_line(&header);
            if !blank && garbage_from.is_none() {
                garbage_from = Some(line_start);
            }
            if matches!(end, LineEnd::Eof) {
                if let Some(from) = garbage_from {
                    out.error(
                        place(from),
                        ReadErrorKind::Garbage,
                        None,
                        format!(
                            "{} bytes at the end that are not a record",
                            input.pos - from
                        ),
                    );
                }
                return SegmentEnd::Clean;
            }
        };
        let position = place(record_start);
        let abandon_record = |error, head: Option<RecordHead>| SegmentEnd::Abandoned {
            error,
            head: head.map(Box::new),
            at: record_start,
        };

        // The rest of the header block, up to its blank line.
        let complete = loop {
            let before = header.len();
            match read_line_capped(input, &mut header, MAX_HEADER_BYTES.saturating_sub(before)) {
                Ok(LineEnd::Newline) if is_blank_line(&header[before..]) => break Ok(()),
                Ok(LineEnd::Newline) => {}
                Ok(LineEnd::Eof) => break Err(ReadErrorKind::TruncatedRecord),
                Ok(LineEnd::TooLong) => break Err(ReadErrorKind::BadHeader),
                Err(e) => return abandon_record(e, None),
            }
        };
        if let Err(kind) = complete {
            let detail = match kind {
                ReadErrorKind::BadHeader => "header block longer than 256 KiB".to_string(),
                _ => "input ends inside the header block".to_string(),
            };
            out.error(position, kind, None, detail);
            continue;
        }
        let head = match parse_head(&header, position) {
            Ok(head) => head,
            Err(detail) => {
                out.error(position, ReadErrorKind::BadHeader, None, detail);
                continue;
            }
        };

        // The block: keep up to the limit, read past the rest.
        let declared = head.content_length;
        let keep = declared.min(limits.max_page_bytes as u64) as usize;
        let mut block = Vec::with_capacity(keep.min(1 << 20));
        let kept = match input.by_ref().take(keep as u64).read_to_end(&mut block) {
            Ok(n) => n as u64,
            Err(e) => return abandon_record(e, Some(head)),
        };
        let skipped = if kept == keep as u64 && declared > kept {
            match io::copy(&mut input.by_ref().take(declared - kept), &mut io::sink()) {
                Ok(n) => n,
                Err(e) => return abandon_record(e, Some(head)),
            }
        } else {
            0
        };
        if kept + skipped < declared {
            out.error(
                position,
                ReadErrorKind::TruncatedRecord,
                Some(Box::new(head)),
                format!(
                    "block declares {declared} bytes, input ends after {}",
                    kept + skipped
                ),
            );
            continue;
        }
        out.record(Record {
            head,
            block,
            block_truncated: skipped > 0,
        });
    }
}

/// Parses a header block (version line through the blank line) with the `warc` crate's parser.
fn parse_head(block: &[u8], position: Position) -> Result<RecordHead, String> {
    let (_, (version, fields, _)) = warc::parser::headers(block).map_err(|e| {
        format!("unparseable WARC header block: {e:?}")
            .chars()
            .take(200)
            .collect::<String>()
    })?;
    let get = |name: &str| {
        fields
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| String::from_utf8_lossy(value).trim().to_string())
    };
    if !version.starts_with("1.") && !version.starts_with("0.") {
        return Err(format!("unknown WARC version {version:?}"));
    }
    // The crate defaults a missing Content-Length to 0; a record without one cannot be framed.
    let content_length = get("Content-Length")
        .ok_or_else(|| "no Content-Length".to_string())?
        .parse::<u64>()
        .map_err(|_| "Content-Length is not a number".to_string())?;
    let record_type = get("WARC-Type")
        .map(RecordType::from)
        .ok_or_else(|| "no WARC-Type".to_string())?;
    Ok(RecordHead {
        position,
        version: version.to_string(),
        record_type,
        // Some writers wrap the URI in angle brackets (WARC/1.0 draft syntax).
        target_uri: get("WARC-Target-URI")
            .map(|u| u.trim_start_matches('<').trim_end_matches('>').to_string()),
        date: get("WARC-Date"),
        record_id: get("WARC-Record-ID"),
        content_type: get("Content-Type"),
        content_length,
        warc_truncated: get("WARC-Truncated"),
        identified_payload_type: get("WARC-Identified-Payload-Type"),
    })
}
