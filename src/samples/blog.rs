//! The blogging platform of the "model and partition data on Azure Cosmos DB with a
//! real-world example" article, generated once and written in its three designs.
//!
//! The underlying data — users, their posts, each post's comments and likes — is a pure
//! function of the seed and the user count, entity by entity (see [`super::rng`]), so the
//! three designs hold exactly the same blog and any user or post can be regenerated alone:
//!
//! - **v1** (normalized): `users` by `/id` holds `{id, username, creationDate}`; `posts` by
//!   `/postId` holds posts, comments and likes told apart by `type`.
//! - **v2** (denormalized reads): as v1, plus `userUsername` on posts, comments and likes,
//!   and `commentCount`/`likeCount` on posts, equal to the comments and likes generated.
//! - **v3** (every query single-partition): as v2, but `users` is partitioned by `/userId`,
//!   its user items carry `type: "user"` and `userId`, and it also holds the [short
//!   form](short_form) of each of the user's posts; `feed` by `/type` holds the short form
//!   of the [`FEED_SIZE`] newest posts.
//!
//! Distribution (the article's test data set): 5–50 posts per user, up to 25 comments and
//! up to 100 likes per post — skewed towards few, the way attention spreads over posts.
//! A user likes a post at most once, so on a blog with fewer than 100 users a post's likes
//! are also capped by the user count; from 100 users on, item counts grow exactly with
//! the user count. Titles have 3–9 words, posts 2–6 paragraphs, comments 1–3 sentences;
//! timestamps fall between 2019 and mid-2025, comments and likes within 30 days of their
//! post.

use serde::Serialize;
use serde_json::{Map, Value};

use super::rng::Rng;
use super::vocab::{Vocabulary, epoch_millis, iso_millis, vocabulary};
use super::{Sink, Writer};
use crate::error::{Error, Result};

/// Users at scale 1 (what first launch loads).
pub const BASE_USERS: f64 = 32.0;
pub const POSTS_PER_USER: (u64, u64) = (5, 50);
pub const MAX_COMMENTS: u64 = 25;
pub const MAX_LIKES: u64 = 100;
/// Posts the v3 `feed` container keeps: the newest by `creationDate`, ties by `id`.
pub const FEED_SIZE: usize = 100;
/// Characters of content the short form of a post keeps.
pub const SUMMARY_CHARS: usize = 200;

/// The first user joins at the start of 2019; nothing happens after June 2025.
const START_MS: i64 = epoch_millis(2019, 1, 1);
const END_MS: i64 = epoch_millis(2025, 6, 1);
const DAY_MS: i64 = 86_400_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    V1,
    V2,
    V3,
}

impl Design {
    pub fn parse(s: &str) -> Result<Design> {
        match s {
            "v1" => Ok(Design::V1),
            "v2" => Ok(Design::V2),
            "v3" => Ok(Design::V3),
            other => Err(Error::internal(format!(
                "the blog generator has designs v1, v2 and v3, not {other:?}"
            ))),
        }
    }

    fn denormalized(self) -> bool {
        self != Design::V1
    }
}

/// One user of the underlying data.
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub index: u64,
    pub id: String,
    pub username: String,
    pub creation_ms: i64,
}

/// A post with its comments and likes; authors are user indices.
#[derive(Debug, Clone, PartialEq)]
pub struct Post {
    pub id: String,
    pub author: u64,
    pub title: String,
    pub content: String,
    pub creation_ms: i64,
    pub comments: Vec<Comment>,
    pub likes: Vec<Like>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    pub id: String,
    pub author: u64,
    pub content: String,
    pub creation_ms: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Like {
    pub id: String,
    pub author: u64,
    pub creation_ms: i64,
}

/// The blog generator for one design.
#[derive(Debug, Clone)]
pub struct Blog {
    seed: u64,
    users: u64,
    design: Design,
}

impl Blog {
    pub fn new(seed: u64, users: u64, design: Design) -> Blog {
        Blog {
            seed,
            users: users.max(1),
            design,
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// How many users the blog has (at least one).
    pub fn users(&self) -> u64 {
        self.users
    }

    pub fn design(&self) -> Design {
        self.design
    }

    /// User `index` (`0..users`).
    pub fn user(&self, index: u64) -> Result<User> {
        let v = vocabulary()?;
        let mut r = Rng::derive(self.seed, "blog.user", index);
        let id = r.uuid();
        let first = Vocabulary::pick(&mut r, &v.people.first_names).to_lowercase();
        let last = Vocabulary::pick(&mut r, &v.people.last_names).to_lowercase();
        // The index keeps usernames unique, as a sign-up form would.
        let username = format!("{first}_{last}{index}");
        let creation_ms = START_MS + r.below(((END_MS - START_MS) / 2) as u64) as i64;
        Ok(User {
            index,
            id,
            username,
            creation_ms,
        })
    }

    /// The per-user stream: the post count, then one child stream per post.
    fn posts_rng(&self, user: u64) -> (Rng, u64) {
        let mut r = Rng::derive(self.seed, "blog.posts", user);
        let n = r.between(POSTS_PER_USER.0, POSTS_PER_USER.1);
        (r, n)
    }

    /// The comment and like counts a post's stream starts with. A user likes a post at
    /// most once, so a post never has more likes than there are users.
    fn post_shape(&self, r: &mut Rng) -> (u64, u64) {
        let comments = r.skewed(MAX_COMMENTS);
        let likes = r.skewed(MAX_LIKES).min(self.users);
        (comments, likes)
    }

    /// Every post of `user`, oldest stream first, with comments and likes.
    pub fn posts(&self, user: &User) -> Result<Vec<Post>> {
        let v = vocabulary()?;
        let (mut pr, n) = self.posts_rng(user.index);
        let mut out = Vec::with_capacity(n as usize);
        for j in 0..n {
            let mut r = pr.child("post", j);
            let (n_comments, n_likes) = self.post_shape(&mut r);
            let creation_ms = user.creation_ms + r.below((END_MS - user.creation_ms) as u64) as i64;
            let id = r.uuid();
            let title = v.title(&mut r, 3, 9);
            let content = v.paragraphs(&mut r, 2, 6);
            let mut comments: Vec<Comment> = (0..n_comments)
                .map(|_| Comment {
                    id: r.uuid(),
                    author: r.below(self.users),
                    content: v.paragraph(&mut r, 1, 3),
                    creation_ms: reaction_time(&mut r, creation_ms),
                })
                .collect();
            comments.sort_by_key(|c| c.creation_ms);
            let mut likes: Vec<Like> = r
                .distinct(self.users, n_likes)
                .into_iter()
                .map(|author| Like {
                    id: r.uuid(),
                    author,
                    creation_ms: reaction_time(&mut r, creation_ms),
                })
                .collect();
            likes.sort_by_key(|l| l.creation_ms);
            out.push(Post {
                id,
                author: user.index,
                title,
                content,
                creation_ms,
                comments,
                likes,
            });
        }
        Ok(out)
    }

    /// Items per generator stream, exactly, from the shapes alone (no text is generated).
    pub fn counts(&self) -> Vec<(&'static str, u64)> {
        let (mut posts, mut items) = (0u64, 0u64);
        for u in 0..self.users {
            let (mut pr, n) = self.posts_rng(u);
            for j in 0..n {
                let (c, l) = self.post_shape(&mut pr.child("post", j));
                items += 1 + c + l;
            }
            posts += n;
        }
        let mut out = vec![("posts", items)];
        match self.design {
            Design::V1 | Design::V2 => out.push(("users", self.users)),
            Design::V3 => {
                out.push(("users", self.users + posts));
                out.push(("feed", posts.min(FEED_SIZE as u64)));
            }
        }
        out
    }

    /// Writes every item of this design to `sink`, user by user (memory stays bounded by
    /// one user's posts plus the feed candidates).
    pub fn run(&self, sink: &mut dyn Sink) -> Result<()> {
        let users: Vec<User> = (0..self.users)
            .map(|i| self.user(i))
            .collect::<Result<_>>()?;
        let mut w = Writer::new(sink);
        let mut feed = Feed::default();
        for user in &users {
            w.emit("users", &self.user_doc(user))?;
            for post in self.posts(user)? {
                let doc = self.post_value(&post, &users)?;
                w.emit("posts", &doc)?;
                for c in &post.comments {
                    let by = &users[c.author as usize];
                    let doc = self.reaction_doc(
                        "comment",
                        &post,
                        &c.id,
                        by,
                        Some(&c.content),
                        c.creation_ms,
                    );
                    w.emit("posts", &doc)?;
                }
                for l in &post.likes {
                    let by = &users[l.author as usize];
                    let doc = self.reaction_doc("like", &post, &l.id, by, None, l.creation_ms);
                    w.emit("posts", &doc)?;
                }
                if self.design == Design::V3 {
                    let short = short_form(&doc);
                    w.emit("users", &short)?;
                    feed.offer(post.creation_ms, post.id, short);
                }
            }
        }
        if self.design == Design::V3 {
            for short in feed.newest() {
                w.emit("feed", &short)?;
            }
        }
        Ok(())
    }

    fn user_doc<'a>(&self, u: &'a User) -> UserDoc<'a> {
        let v3 = self.design == Design::V3;
        UserDoc {
            id: &u.id,
            kind: v3.then_some("user"),
            user_id: v3.then_some(u.id.as_str()),
            username: &u.username,
            creation_date: iso_millis(u.creation_ms),
        }
    }

    /// The post item as JSON (v3 derives its short forms from it, as its processor will).
    fn post_value(&self, p: &Post, users: &[User]) -> Result<Value> {
        let denorm = self.design.denormalized();
        let author = &users[p.author as usize];
        let doc = PostDoc {
            id: &p.id,
            kind: "post",
            post_id: &p.id,
            user_id: &author.id,
            user_username: denorm.then_some(author.username.as_str()),
            title: &p.title,
            content: &p.content,
            comment_count: denorm.then_some(p.comments.len() as u64),
            like_count: denorm.then_some(p.likes.len() as u64),
            creation_date: iso_millis(p.creation_ms),
        };
        serde_json::to_value(doc).map_err(|e| Error::internal(format!("serializing a post: {e}")))
    }

    /// A comment (with content) or a like (without) on post `p` by user `author`.
    fn reaction_doc<'a>(
        &self,
        kind: &'static str,
        p: &'a Post,
        id: &'a str,
        author: &'a User,
        content: Option<&'a str>,
        ms: i64,
    ) -> ReactionDoc<'a> {
        ReactionDoc {
            id,
            kind,
            post_id: &p.id,
            user_id: &author.id,
            user_username: self
                .design
                .denormalized()
                .then_some(author.username.as_str()),
            content,
            creation_date: iso_millis(ms),
        }
    }
}

/// Comments and likes come soon after the post: within a day mostly, within 30 days
/// always, never after the end of the data set.
fn reaction_time(r: &mut Rng, post_ms: i64) -> i64 {
    let u = r.unit();
    let delay = (u * u * u * 30.0 * DAY_MS as f64) as i64;
    (post_ms + 1 + delay).min(END_MS - 1).max(post_ms)
}

/// The short form of a post item, as the v3 `users` and `feed` containers hold it: the
/// post's own fields (no system properties) with the content cut to [`summary`]. The
/// change feed processor that keeps v3 in sync uses the same function.
pub fn short_form(post: &Value) -> Value {
    const FIELDS: [&str; 10] = [
        "id",
        "type",
        "postId",
        "userId",
        "userUsername",
        "title",
        "content",
        "commentCount",
        "likeCount",
        "creationDate",
    ];
    let mut out = Map::new();
    for f in FIELDS {
        if let Some(v) = post.get(f) {
            let v = match (f, v) {
                ("content", Value::String(s)) => Value::String(summary(s)),
                _ => v.clone(),
            };
            out.insert(f.to_string(), v);
        }
    }
    Value::Object(out)
}

/// The first [`SUMMARY_CHARS`] characters of `content`, cut at a word boundary and marked
/// with an ellipsis when anything was cut.
pub fn summary(content: &str) -> String {
    if content.chars().count() <= SUMMARY_CHARS {
        return content.to_string();
    }
    let cut = content
        .char_indices()
        .nth(SUMMARY_CHARS)
        .map_or(content.len(), |(i, _)| i);
    let head = &content[..cut];
    let head = head.rfind(char::is_whitespace).map_or(head, |i| &head[..i]);
    format!("{}…", head.trim_end_matches([',', '.', ' ', '\n']))
}

/// The candidates for the v3 feed: keeps the newest [`FEED_SIZE`] seen so far.
#[derive(Default)]
struct Feed {
    posts: Vec<(i64, String, Value)>,
}

impl Feed {
    fn offer(&mut self, ms: i64, id: String, short: Value) {
        self.posts.push((ms, id, short));
        if self.posts.len() >= FEED_SIZE * 4 {
            self.trim();
        }
    }

    fn trim(&mut self) {
        self.posts
            .sort_unstable_by(|a, b| (b.0, &b.1).cmp(&(a.0, &a.1)));
        self.posts.truncate(FEED_SIZE);
    }

    /// Newest first.
    fn newest(mut self) -> impl Iterator<Item = Value> {
        self.trim();
        self.posts.into_iter().map(|(_, _, v)| v)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UserDoc<'a> {
    id: &'a str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<&'a str>,
    username: &'a str,
    creation_date: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PostDoc<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    post_id: &'a str,
    user_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_username: Option<&'a str>,
    title: &'a str,
    content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    like_count: Option<u64>,
    creation_date: String,
}

/// A comment or a like: the same fields, likes have no content.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReactionDoc<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    post_id: &'a str,
    user_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_username: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    creation_date: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_cut_at_a_word() {
        assert_eq!(summary("short"), "short");
        let long = "word ".repeat(100);
        let s = summary(&long);
        assert!(s.ends_with("word…"), "{s}");
        assert!(s.chars().count() <= SUMMARY_CHARS + 1);
    }

    #[test]
    fn short_forms_keep_the_post_fields_only() {
        let post = serde_json::json!({
            "id": "p", "type": "post", "postId": "p", "userId": "u", "title": "T",
            "content": "x ".repeat(300), "creationDate": "2020", "_etag": "\"e\"", "_ts": 1
        });
        let s = short_form(&post);
        assert!(s.get("_etag").is_none() && s.get("_ts").is_none());
        assert!(s["content"].as_str().unwrap().chars().count() <= SUMMARY_CHARS + 1);
        assert_eq!(s["postId"], "p");
    }

    #[test]
    fn counts_match_what_is_generated() {
        struct Count(Vec<(String, u64)>);
        impl Sink for Count {
            fn emit(&mut self, stream: &str, _: &[u8]) -> Result<()> {
                match self.0.iter_mut().find(|(s, _)| s == stream) {
                    Some((_, n)) => *n += 1,
                    None => self.0.push((stream.to_string(), 1)),
                }
                Ok(())
            }
        }
        for design in [Design::V1, Design::V3] {
            let blog = Blog::new(9, 3, design);
            let mut c = Count(Vec::new());
            blog.run(&mut c).unwrap();
            for (stream, n) in blog.counts() {
                let got = c.0.iter().find(|(s, _)| s == stream).map_or(0, |x| x.1);
                assert_eq!(got, n, "{design:?} {stream}");
            }
        }
    }
}
