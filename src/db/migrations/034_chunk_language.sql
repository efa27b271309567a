-- Each passage is read in its page's language: its full-text vector is built with that language's
-- configuration (`french` stems "réservations" to "reserv", where `english` kept the word whole), and
-- retrieval queries each passage in its own. Existing passages were stored as English; a re-crawl
-- sets the language of each page it reads.
alter table page_chunks add column language regconfig not null default 'english';
drop index page_chunks_tsv;
alter table page_chunks drop column tsv;
alter table page_chunks add column tsv tsvector
  generated always as (to_tsvector(language, coalesce(section, '') || ' ' || text)) stored;
create index page_chunks_tsv on page_chunks using gin (tsv);
