//! Chat messages in the OpenAI Chat Completions shape, with image parts.

use std::fmt;
use std::path::Path;

use base64::Engine as _;
use serde::Serialize;

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The question.
    User,
    /// The model's earlier reply.
    Assistant,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

/// A message's content: text, or parts (text and images).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Text and image parts, in order.
    Parts(Vec<Part>),
}

/// One part of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// `{"type": "text", "text": …}`
    Text {
        /// The text.
        text: String,
    },
    /// `{"type": "image_url", "image_url": {"url": …}}`
    ImageUrl {
        /// The image.
        image_url: ImageUrl,
    },
}

/// An image: an `https:` URL or a `data:` URL.
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct ImageUrl {
    /// The URL.
    pub url: String,
    /// `low`, `high` or `auto`, where the provider supports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Why an image could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The file could not be read.
    #[error("{path}: cannot read the image: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file's extension names no image type vouch-llm knows.
    #[error("{path}: unknown image type (expected .png, .jpg, .jpeg, .gif or .webp)")]
    UnknownType {
        /// The file.
        path: String,
    },
}

impl ImageUrl {
    /// An image at a URL (`https:`, `http:` or `data:`), sent as is.
    #[must_use]
    pub fn url(url: impl Into<String>) -> Self {
        Self { url: url.into(), detail: None }
    }

    /// A local image file as a `data:` URL, its MIME type from the extension.
    ///
    /// # Errors
    /// When the file cannot be read or its extension is not an image type.
    pub fn from_file(path: &Path) -> Result<Self, ImageError> {
        let shown = path.display().to_string();
        let mime = mime_type(path).ok_or_else(|| ImageError::UnknownType { path: shown.clone() })?;
        let bytes = std::fs::read(path).map_err(|source| ImageError::Read { path: shown, source })?;
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        Ok(Self { url: format!("data:{mime};base64,{data}"), detail: None })
    }

    /// A URL when `arg` is one (`http://`, `https://`, `data:`), else a local file.
    ///
    /// # Errors
    /// As [`ImageUrl::from_file`].
    pub fn from_file_or_url(arg: &str) -> Result<Self, ImageError> {
        let lower = arg.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("data:") {
            Ok(Self::url(arg))
        } else {
            Self::from_file(Path::new(arg))
        }
    }
}

impl fmt::Debug for ImageUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A data URL is the whole image: show its head and size only.
        let shown = match self.url.split_once(',') {
            Some((head, data)) if head.starts_with("data:") => format!("{head},… ({} bytes)", data.len()),
            _ => self.url.clone(),
        };
        f.debug_struct("ImageUrl").field("url", &shown).field("detail", &self.detail).finish()
    }
}

/// The MIME type of an image file, from its extension.
#[must_use]
pub fn mime_type(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

impl Message {
    /// A system message.
    #[must_use]
    pub fn system(text: impl Into<String>) -> Self {
        Self { role: Role::System, content: Content::Text(text.into()) }
    }

    /// A user message.
    #[must_use]
    pub fn user(text: impl Into<String>) -> Self {
        Self { role: Role::User, content: Content::Text(text.into()) }
    }

    /// A user message with images after the text (plain text when there are none).
    #[must_use]
    pub fn user_with_images(text: impl Into<String>, images: Vec<ImageUrl>) -> Self {
        if images.is_empty() {
            return Self::user(text);
        }
        let mut parts = vec![Part::Text { text: text.into() }];
        parts.extend(images.into_iter().map(|image_url| Part::ImageUrl { image_url }));
        Self { role: Role::User, content: Content::Parts(parts) }
    }

    /// An assistant message (the model's earlier reply).
    #[must_use]
    pub fn assistant(text: impl Into<String>) -> Self {
        Self { role: Role::Assistant, content: Content::Text(text.into()) }
    }

    /// The text of the message (its text parts joined by newlines).
    #[must_use]
    pub fn text(&self) -> String {
        match &self.content {
            Content::Text(t) => t.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text { text } => Some(text.as_str()),
                    Part::ImageUrl { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_parts_serialize_as_openai_expects() {
        let m = Message::user_with_images("look", vec![ImageUrl::url("https://example.invalid/p.png")]);
        let v = serde_json::to_value(&m).ok();
        assert_eq!(
            v,
            Some(serde_json::json!({"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "https://example.invalid/p.png"}}
            ]}))
        );
    }

    #[test]
    fn mime_types_come_from_the_extension() {
        assert_eq!(mime_type(Path::new("a/plate.JPG")), Some("image/jpeg"));
        assert_eq!(mime_type(Path::new("plate.webp")), Some("image/webp"));
        assert_eq!(mime_type(Path::new("plate.txt")), None);
    }
}
