-- A site is `ready` once its pages are stored and their passages full-text indexed; their meaning vectors are
-- computed after (issue 48: encoding them before each page was stored made a 1000-page crawl take 828 s instead of
-- 4 to 6). `passages` counts the passages of the index served now, `passages_embedding` those of them still waiting
-- for their vector: they are found by their words until then.
alter table sites add column passages integer not null default 0;
alter table sites add column passages_embedding integer not null default 0;
update sites s set passages = (select count(*) from page_chunks c where c.site_id = s.id and c.generation = s.generation);
