//! Where a WKT geometry goes wrong. The wkt crate says what is wrong, not where: this walks
//! the same grammar over the same tokens and gives the byte offset of the first token that
//! does not fit (or of the end, where more was expected), for the `line:column` of an error.
//! It is asked only after the crate refused a geometry, and says nothing of values.

/// The byte offset in `text` of the first token that does not fit WKT's grammar; `None` when
/// every token fits (the crate refused something else: then the geometry's start is the place).
pub fn error_offset(text: &str) -> Option<usize> {
    let mut walk = Walk {
        text,
        at: 0,
        dimensions: None,
    };
    walk.geometry().and_then(|()| walk.end()).err()
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
    /// Numbers a point: from the dimension's word (Z or M 3, ZM 4), else the first point's.
    dimensions: Option<usize>,
}

/// A token that does not fit: its offset.
type Fits = Result<(), usize>;

impl<'a> Walk<'a> {
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
        let depth = match word.to_ascii_uppercase().as_str() {
            "POINT" | "LINESTRING" | "MULTIPOINT" => 0,
            "POLYGON" | "MULTILINESTRING" => 1,
            "MULTIPOLYGON" => 2,
            "GEOMETRYCOLLECTION" => 3,
            _ => return Err(start),
        };
        self.at = end;
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

    /// `(item, item, …)`.
    fn list(&mut self, mut item: impl FnMut(&mut Self) -> Fits) -> Fits {
        self.take(Token::Open)?;
        loop {
            item(self)?;
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

    /// As many numbers as the geometry's points have: two to four for its first.
    fn point(&mut self) -> Fits {
        let (least, most) = self.dimensions.map_or((2, 4), |d| (d, d));
        let mut n = 0;
        while let (start, Token::Number, end) = self.peek() {
            if n == most {
                return Err(start);
            }
            self.at = end;
            n += 1;
        }
        if n < least {
            return Err(self.peek().0);
        }
        self.dimensions = Some(n);
        Ok(())
    }
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
    }

    #[test]
    fn valid_geometry_has_no_place() {
        for text in [
            "POLYGON ((0 0, 1 0, 1 1, 0 0), (0.2 0.1, 0.3 0.1, 0.3 0.2, 0.2 0.1))",
            "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))",
            "MULTILINESTRING ((0 0, 1 1), (2 2, 3 3))",
            "LINESTRING Z (0 0 1, 1 1 1)",
            "multipoint ((1 2), (3 4))",
            "POLYGON EMPTY",
            "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1e-3 -2.5E+4))",
        ] {
            assert_eq!(error_offset(text), None, "{text}");
        }
    }
}
