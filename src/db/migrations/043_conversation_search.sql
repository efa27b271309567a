-- Search and filters on GET /conversations (issue 45 item 5).
--
-- Each message is read in its language: `conversation_messages.language` (the conversation's, unless the
-- writer names one) chooses the text-search configuration (`ams_text_config`), and the message's words go
-- into its conversation's `transcript_tsv`, a GIN-indexed vector of the whole transcript. A search expands
-- the words into each configuration (`ams_search_query`: "angry caller" becomes 'angri' & 'caller' for
-- English, 'angry' & 'caller' for simple, ...), so a French message is found by its French stem and an
-- English one by its English stem, in one index scan; combined with the started_at range it is one bitmap AND.

-- Assignment columns (the members branch owns assignment): `assigned_member_id` exists since 016; the team
-- is added here only if that branch has not added it.
alter table conversations add column if not exists team_id uuid;
create index if not exists conversations_org_team on conversations (org_id, team_id, started_at desc) where team_id is not null;
create index if not exists conversations_org_assignee on conversations (org_id, assigned_member_id, started_at desc) where assigned_member_id is not null;

alter table conversation_messages add column language text;
alter table conversations add column transcript_tsv tsvector not null default '';

-- A BCP 47 tag's text-search configuration: its primary language when PostgreSQL has one, else `simple`
-- (no stemming); no language (phone calls, most older conversations) reads as English.
create function ams_text_config(lang text) returns regconfig language sql immutable parallel safe as $$
  select case lower(split_part(coalesce(lang, 'en'), '-', 1))
    when 'en' then 'english' when 'fr' then 'french' when 'de' then 'german' when 'es' then 'spanish'
    when 'it' then 'italian' when 'pt' then 'portuguese' when 'nl' then 'dutch' when 'sv' then 'swedish'
    when 'da' then 'danish' when 'fi' then 'finnish' when 'no' then 'norwegian' when 'nb' then 'norwegian'
    when 'ru' then 'russian' when 'tr' then 'turkish' when 'hu' then 'hungarian' when 'ro' then 'romanian'
    else 'simple' end::regconfig
$$;

-- The text-search configurations an organization's messages were read in, so that a search expands its words
-- into those only (a stemmer the organization never used would only add unrelated stems). Kept by the triggers
-- below: once per new language, an index probe otherwise.
create table conversation_languages (
  org_id uuid not null references organizations(id) on delete cascade,
  config regconfig not null,
  primary key (org_id, config)
);

-- The search words as one tsquery over the given configurations (each alternative once); an empty query
-- (stop words only) matches nothing.
create function ams_search_query(q text, configs regconfig[]) returns tsquery language sql immutable parallel safe as $$
  select coalesce((select string_agg('(' || t || ')', ' | ')
    from (select distinct websearch_to_tsquery(cfg, q)::text as t from unnest(configs) cfg) x
    where t <> '')::tsquery, ''::tsquery)
$$;

create function conversation_language_note() returns trigger language plpgsql as $$
begin
  insert into conversation_languages (org_id, config) values (new.org_id, ams_text_config(new.language)) on conflict do nothing;
  return new;
end $$;
create trigger conversations_language after insert or update of language on conversations
  for each row execute function conversation_language_note();

-- Every message but the service's own `system` notes adds its words to the transcript's vector, read in its language.
create function conversation_message_index() returns trigger language plpgsql as $$
declare lang text; org uuid;
begin
  update conversations set transcript_tsv = case when new.role = 'system' then transcript_tsv
      else transcript_tsv || to_tsvector(ams_text_config(coalesce(new.language, language)), new.text) end
    where id = new.conversation_id returning language, org_id into lang, org;
  if new.language is not null and ams_text_config(new.language) <> ams_text_config(lang) then
    insert into conversation_languages (org_id, config) values (org, ams_text_config(new.language)) on conflict do nothing;
  end if;
  new.language := coalesce(new.language, lang);
  return new;
end $$;
create trigger conversation_messages_index before insert on conversation_messages
  for each row execute function conversation_message_index();

-- The vectors of many messages as one (the backfill below, and bulk loads such as bench:search).
create aggregate ams_tsvector_agg(tsvector) (sfunc = tsvector_concat, stype = tsvector, initcond = '');

update conversation_messages m set language = c.language from conversations c where c.id = m.conversation_id and c.language is not null;
update conversations c set transcript_tsv = t.tsv from (
  select conversation_id, ams_tsvector_agg(to_tsvector(ams_text_config(language), text) order by ts, id) as tsv
  from conversation_messages where role <> 'system' group by conversation_id) t
where t.conversation_id = c.id;

insert into conversation_languages (org_id, config)
  select distinct org_id, ams_text_config(language) from conversations
  union select distinct c.org_id, ams_text_config(m.language) from conversation_messages m join conversations c on c.id = m.conversation_id
on conflict do nothing;

create index conversations_transcript on conversations using gin (transcript_tsv);
