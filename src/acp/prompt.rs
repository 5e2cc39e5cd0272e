//! An ACP prompt (text, resource links, embedded resources, images) as the stream-json user
//! message `claude --input-format stream-json` reads on its stdin.

use agent_client_protocol_schema::v1::{ContentBlock, EmbeddedResourceResource};
use serde_json::{Value, json};

/// The stream-json line (without its newline) for `prompt`. Audio and binary resources have
/// no Claude Code input: they are named in the text instead of dropped silently.
pub fn user_line(prompt: &[ContentBlock], session_id: &str) -> Vec<u8> {
    let mut content: Vec<Value> = Vec::new();
    let mut context = String::new();
    for block in prompt {
        match block {
            ContentBlock::Text(t) => content.push(json!({"type": "text", "text": t.text})),
            ContentBlock::ResourceLink(l) => {
                content.push(json!({"type": "text", "text": format!("[{}]({})", l.name, l.uri)}))
            }
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    context.push_str(&format!(
                        "\n<context ref=\"{}\">\n{}\n</context>",
                        t.uri, t.text
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(b) => content.push(json!({
                    "type": "text",
                    "text": format!("(binary resource {} not included)", b.uri)
                })),
                _ => {}
            },
            ContentBlock::Image(i) => {
                let source = match (&i.uri, i.data.is_empty()) {
                    (Some(uri), true) if uri.starts_with("http") => {
                        json!({"type": "url", "url": uri})
                    }
                    _ => json!({"type": "base64", "media_type": i.mime_type, "data": i.data}),
                };
                content.push(json!({"type": "image", "source": source}));
            }
            ContentBlock::Audio(_) => content.push(json!({
                "type": "text",
                "text": "(audio input not supported by Claude Code, not included)"
            })),
            _ => {}
        }
    }
    if !context.is_empty() {
        content.push(json!({"type": "text", "text": context.trim_start()}));
    }
    let line = json!({
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": null,
        "session_id": session_id,
    });
    serde_json::to_vec(&line).expect("a JSON value serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_become_one_user_message() {
        let prompt: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "look"},
            {"type": "resource_link", "name": "a.rs", "uri": "file:///r/a.rs"},
            {"type": "resource", "resource": {"uri": "file:///r/b.rs", "text": "fn b() {}"}},
            {"type": "image", "mimeType": "image/png", "data": "iVBO"}
        ]))
        .unwrap();
        let v: Value = serde_json::from_slice(&user_line(&prompt, "s1")).unwrap();
        let c = &v["message"]["content"];
        assert_eq!(c[0]["text"], "look");
        assert_eq!(c[1]["text"], "[a.rs](file:///r/a.rs)");
        assert_eq!(c[2]["source"]["media_type"], "image/png");
        assert!(
            c[3]["text"]
                .as_str()
                .unwrap()
                .contains("<context ref=\"file:///r/b.rs\">")
        );
        assert_eq!(v["session_id"], "s1");
    }
}
