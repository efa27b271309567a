-- A passage's full-text vector is built from its text without accents, as the engine reads a question's words
-- (folded: "fidelite", "gateau", "reservation"). With the accents kept, `french` stemmed the page's "fidélité" to
-- "fidel" and the question's "fidelite" to "fidelit", and "gâteaux" never met "gateau": every accented French word
-- missed, in retrieval and in the word counts that weigh a question's words. `translate` drops the accents of the
-- letters Unicode decomposes (what the engine's folding drops), so the expression stays immutable, as a generated
-- column needs, with no extension. An accented question word is folded the same way before it is queried.
drop index page_chunks_tsv;
alter table page_chunks drop column tsv;
alter table page_chunks add column tsv tsvector
  generated always as (to_tsvector(language, translate(coalesce(section, '') || ' ' || text,
    'àáâãäåçèéêëìíîïñòóôõöùúûüýÿÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝŸ',
    'aaaaaaceeeeiiiinooooouuuuyyAAAAAACEEEEIIIINOOOOOUUUUYY'))) stored;
create index page_chunks_tsv on page_chunks using gin (tsv);
