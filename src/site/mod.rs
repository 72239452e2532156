//! Publishing: the pages, feeds, previews and machine listings of the site, rendered from the
//! archive model with the theme's templates.

pub mod feed;
pub mod notes;
pub mod pages;
pub mod preview;
pub mod theme;
