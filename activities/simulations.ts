import { heartbeating, type ActivityRegistration } from './index.ts';
import { closeSimulation, playSimulationTurn } from '../src/simulations/turns.ts';
import { runWebSimulation } from '../src/simulations/web.ts';
import { createToolSender } from '../src/tools/send.ts';
import { speechToTextOf, textToSpeechOf } from '../src/voice/configured-engines.ts';
import type { ActivityDeps } from './index.ts';

export function createSimulationActivities(deps: ActivityDeps) {
  // The agent's tool calls during a turn are made here, in process: a simulated conversation has no workflow of its own.
  const sendTool = createToolSender(deps);
  // A streamed phone run speaks and hears with the engines of the service's streamed calls (VOICE_TTS, VOICE_STT).
  const speech = { stt: speechToTextOf(deps.config), tts: textToSpeechOf(deps.config) };
  return {
    /** One caller turn and one agent turn, stored together; a turn already stored is answered again. */
    playSimulationTurn: (input: { simulationId: string; turn: number }) => playSimulationTurn({ ...deps, sendTool, speech }, input),
    /** Records the run's end (completed, canceled or failed) and ends its conversation. */
    closeSimulation: (input: Parameters<typeof closeSimulation>[1]) => closeSimulation(deps, input),
    /** The whole browser run, heartbeating every 2 s (its heartbeat timeout is 10 s) so that a cancellation reaches it. */
    runWebSimulation: (input: { simulationId: string; embedBaseUrl: string }) => heartbeating(() => runWebSimulation(deps, input), 2_000),
  };
}

export type SimulationActivities = ReturnType<typeof createSimulationActivities>;

export const registration: ActivityRegistration = { queue: 'conversations', create: createSimulationActivities };
