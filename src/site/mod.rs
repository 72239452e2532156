//! Publishing: the pages, feeds and machine listing of the site, rendered from the archive
//! model with the theme's templates. Nothing here reads profiles or writes files: [`pages`]
//! says what each page shows and renders it; the build decides which pages to write.

pub mod charts;
pub mod feed;
pub mod index_json;
pub mod pages;
pub mod theme;
