import type { Config } from '../config.ts';
import { deepgramFromConfig } from './deepgram.ts';
import { elevenLabsFromConfig } from './elevenlabs.ts';
import { createEspeak, createPocketsphinx, type SpeechToText, type TextToSpeech } from './engines.ts';
import { openAiSpeechFromConfig } from './openai-speech.ts';

/** The configured text-to-speech (VOICE_TTS): espeak-ng, the OpenAI-compatible API or ElevenLabs. */
export function textToSpeechOf(config: Config): TextToSpeech {
  if (config.VOICE_TTS === 'openai') return openAiSpeechFromConfig(config);
  if (config.VOICE_TTS === 'elevenlabs') return elevenLabsFromConfig(config);
  return createEspeak();
}

/** The configured speech-to-text (VOICE_STT): pocketsphinx or Deepgram. */
export function speechToTextOf(config: Config): SpeechToText {
  return config.VOICE_STT === 'deepgram' ? deepgramFromConfig(config) : createPocketsphinx();
}
