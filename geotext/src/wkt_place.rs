//! Where a WKT geometry goes wrong. The wkt crate says what is wrong, not where: this walks
//! the same grammar over the same tokens and gives the byte offset of the first token that
//! does not fit (or of the end, where more was expected), for the `line:column` of an error.
//! It is asked only after the crate refused a geometry, and says nothing of values.

/// The byte offset in `text` of the first token that does not fit WKT's grammar; `None` when
/// every token fits (the crate refused something else: then the geometry's start is the place).
pub fn error_offset(text: &str) -> Option<usize> {
    let mut walk = Walk::new(text);
    walk.geometry().and_then(|()| walk.end()).err()
}

/// The byte offset of text after a whole geometry, which the wkt crate reads past without a
/// word (`POLYGON ((…)) x`, two geometries on a line); `None` when the geometry ends the text,
/// or when the walk does not reach its end (the crate, which read it, is the judge then).
pub fn trailing_offset(text: &str) -> Option<usize> {
    let mut walk = Walk::new(text);
    walk.geometry().ok()?;
    walk.end().err()
}

#[derive(Debug, PartialEq)]
enum Token<'a> {
    Open,
    Close,
    Comma,
    Word(&'a str),
    Number,
    Other,
    End,
}

struct Walk<'a> {
    text: &'a str,
    at: usize,
    /// Numbers a point: from the dimension's word (Z or M 3, ZM 4), else 2, as the wkt crate
    /// reads them.
    dimensions: Option<usize>,
}

/// A token that does not fit: its offset.
type Fits = Result<(), usize>;

impl<'a> Walk<'a> {
    fn new(text: &'a str) -> Self {
        Walk {
            text,
            at: 0,
            dimensions: None,
        }
    }

    /// The next token and its offset, not taken.
    fn peek(&self) -> (usize, Token<'a>, usize) {
        let rest = &self.text[self.at..];
        let start = self.at + (rest.len() - rest.trim_start().len());
        let rest = &self.text[start..];
        let Some(c) = rest.chars().next() else {
            return (start, Token::End, start);
        };
        let run = |keep: fn(char) -> bool| rest.find(|c: char| !keep(c)).unwrap_or(rest.len());
        let (token, len) = match c {
            '(' => (Token::Open, 1),
            ')' => (Token::Close, 1),
            ',' => (Token::Comma, 1),
            c if c.is_ascii_alphabetic() => {
                let len = run(|c| c.is_ascii_alphabetic());
                (Token::Word(&rest[..len]), len)
            }
            c if c.is_ascii_digit() || "+-.".contains(c) => {
                let len = run(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
                match rest[..len].parse::<f64>() {
                    Ok(_) => (Token::Number, len),
                    Err(_) => (Token::Other, len),
                }
            }
            c => (Token::Other, c.len_utf8()),
        };
        (start, token, start + len)
    }

    fn take(&mut self, want: Token<'_>) -> Fits {
        let (start, token, end) = self.peek();
        if token != want {
            return Err(start);
        }
        self.at = end;
        Ok(())
    }

    fn end(&mut self) -> Fits {
        self.take(Token::End)
    }

    /// A geometry: its type, a dimension, then EMPTY or its coordinates.
    fn geometry(&mut self) -> Fits {
        let (start, token, end) = self.peek();
        let Token::Word(word) = token else {
            return Err(start);
        };
        let word = word.to_ascii_uppercase();
        // The dimension may be joined to the type (`POINTZ`, `POLYGONZM`).
        let (name, joined) = ["ZM", "Z", "M"]
            .iter()
            .find_map(|d| {
                let name = word.strip_suffix(d)?;
                known(name).then_some((name, Some(2 + d.len())))
            })
            .unwrap_or((&word, None));
        let Some(depth) = depth_of(name) else {
            return Err(start);
        };
        self.at = end;
        self.dimensions = joined.or(Some(2));
        if let (_, Token::Word(w), end) = self.peek()
            && ["Z", "M", "ZM"].iter().any(|d| w.eq_ignore_ascii_case(d))
        {
            self.dimensions = Some(2 + w.len());
            self.at = end;
        }
        if let (_, Token::Word(w), end) = self.peek()
            && w.eq_ignore_ascii_case("EMPTY")
        {
            self.at = end;
            return Ok(());
        }
        match depth {
            3 => self.list(|walk| walk.geometry()),
            depth => self.nested(depth),
        }
    }

    /// `(item, item, …)`, where an item may be EMPTY.
    fn list(&mut self, mut item: impl FnMut(&mut Self) -> Fits) -> Fits {
        self.take(Token::Open)?;
        loop {
            match self.peek() {
                (_, Token::Word(w), end) if w.eq_ignore_ascii_case("EMPTY") => self.at = end,
                _ => item(self)?,
            }
            match self.peek() {
                (_, Token::Comma, end) => self.at = end,
                (_, Token::Close, end) => {
                    self.at = end;
                    return Ok(());
                }
                (start, ..) => return Err(start),
            }
        }
    }

    /// Coordinates `depth` lists deep: a list of points at 0 (a MULTIPOINT's may each be in
    /// parentheses), of lists of points at 1, and so on.
    fn nested(&mut self, depth: u32) -> Fits {
        self.list(|walk| match depth {
            0 if walk.peek().1 == Token::Open => walk.list(Self::point),
            0 => walk.point(),
            _ => walk.nested(depth - 1),
        })
    }

    /// As many numbers as the geometry's points have.
    fn point(&mut self) -> Fits {
        let want = self.dimensions.unwrap_or(2);
        for _ in 0..want {
            self.take(Token::Number)?;
        }
        match self.peek() {
            (start, Token::Number, _) => Err(start),
            _ => Ok(()),
        }
    }
}

/// How deep a geometry type's coordinates are nested ([`Walk::nested`]; 3: a collection).
fn depth_of(name: &str) -> Option<u32> {
    Some(match name {
        "POINT" | "LINESTRING" | "MULTIPOINT" => 0,
        "POLYGON" | "MULTILINESTRING" => 1,
        "MULTIPOLYGON" => 2,
        "GEOMETRYCOLLECTION" => 3,
        _ => return None,
    })
}

fn known(name: &str) -> bool {
    depth_of(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::error_offset;

    /// The offset of the first token that does not fit, shown by `^` under the text.
    fn at(marked: &str) -> Option<usize> {
        let (text, mark) = marked.split_once('\n').unwrap();
        let got = error_offset(text);
        assert_eq!(got, mark.find('^'), "{text}");
        got
    }

    #[test]
    fn the_first_token_that_does_not_fit_is_the_place() {
        at("POLYGON ((0 0, 1 0, 1 1, 0 0)\n                             ^");
        at("POLYGON ((0 0, 1 0, 1 nan, 0 0))\n                      ^");
        at("POLYGON ((0 0, 1 0, 1 1 0 0))\n                        ^");
        at("POLYGN ((0 0, 1 0, 1 1, 0 0))\n^");
        at("LINESTRING (0 0, 1 1) x\n                      ^");
        at("MULTIPOLYGON ((0 0, 1 0, 1 1, 0 0))\n               ^");
        at("LINESTRING (0 0, 1 1,)\n                     ^");
        // Three numbers with no Z: the third does not fit, as the wkt crate reads it.
        at("POLYGON ((0 0 0, 1 0 0, 1 1 0, 0 0 0))\n              ^");
    }

    #[test]
    fn text_after_a_whole_geometry_is_placed() {
        use super::trailing_offset;
        assert_eq!(trailing_offset("LINESTRING (0 0, 1 1) x"), Some(22));
        assert_eq!(trailing_offset("POINT (1 2) POINT (3 4)"), Some(12));
        assert_eq!(trailing_offset("LINESTRING (0 0, 1 1)  "), None);
    }

    #[test]
    fn valid_geometry_has_no_place() {
        for text in [
            "POLYGON ((0 0, 1 0, 1 1, 0 0), (0.2 0.1, 0.3 0.1, 0.3 0.2, 0.2 0.1))",
            "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))",
            "MULTILINESTRING ((0 0, 1 1), (2 2, 3 3))",
            "LINESTRING Z (0 0 1, 1 1 1)",
            "POINTZ (1 2 3)",
            "MULTIPOLYGON (EMPTY, ((0 0, 1 0, 1 1, 0 0)))",
            "multipoint ((1 2), (3 4))",
            "POLYGON EMPTY",
            "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1e-3 -2.5E+4))",
        ] {
            assert_eq!(error_offset(text), None, "{text}");
        }
    }
}
