-- Each passage carries its meaning: the sentence encoder's unit vector of its section and text
-- (float32, little-endian), computed when the page is crawled. Retrieval fuses it with full text.
-- Null for passages stored before, or when the encoder was off: those are found by their words only.
alter table page_chunks add column embedding bytea;
