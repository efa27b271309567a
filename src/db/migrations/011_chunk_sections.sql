-- Passages know their section ("Page title › Heading"), so that a reply can cite it and
-- retrieval can match a heading's words ("Riverside") with the passage under it. The full-text
-- vector covers the section and the text; the column is generated, so existing rows get it now.
alter table page_chunks add column section text;
drop index page_chunks_tsv;
alter table page_chunks drop column tsv;
alter table page_chunks add column tsv tsvector
  generated always as (to_tsvector('english', coalesce(section, '') || ' ' || text)) stored;
create index page_chunks_tsv on page_chunks using gin (tsv);
