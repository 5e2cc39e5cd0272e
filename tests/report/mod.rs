//! `report`: the HTML report rendered from every fixture, hostile strings kept as text, and the page in a real browser.

mod browser;
pub mod render;
