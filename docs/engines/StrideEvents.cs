// Stride's events as Unity AnimationEvents (an example to adapt).
//
// Put this file in an Editor folder (Assets/Editor/StrideEvents.cs) and the exported FILE.fbx and
// FILE.events.json side by side under Assets/. On (re)import, each clip whose take is an action in
// the events file gets an AnimationEvent per event, calling OnStrideEvent(string name) on the
// GameObject the Animator plays (FootDown_L, FootDown_R, your own markers):
//
//     public class Footsteps : MonoBehaviour {
//         void OnStrideEvent(string name) { if (name.StartsWith("FootDown")) audioSource.Play(); }
//     }
//
// The curves (contact_L, phase_sin, ...) are in the same file; JsonUtility reads no dictionaries,
// so read them with a JSON library (com.unity.nuget.newtonsoft-json) into
// ModelImporterClipAnimation.curves the same way if you need them.
using System.Collections.Generic;
using System.IO;
using UnityEditor;
using UnityEngine;

public class StrideEvents : AssetPostprocessor
{
    [System.Serializable] class StrideEvent { public string name; public float time; public float frame; }

    [System.Serializable]
    class StrideAction
    {
        public string name;
        public float frame_start;
        public float frame_end;
        public float fps;
        public StrideEvent[] events;
    }

    [System.Serializable] class StrideFile { public int version; public StrideAction[] actions; }

    void OnPreprocessAnimation()
    {
        string sidecar = Path.ChangeExtension(assetPath, null) + ".events.json";
        if (!File.Exists(sidecar))
            return;
        var data = JsonUtility.FromJson<StrideFile>(File.ReadAllText(sidecar));
        if (data == null || data.version != 1)
        {
            Debug.LogWarning($"Stride: {sidecar} is not a Stride events file (version 1)");
            return;
        }
        var importer = (ModelImporter)assetImporter;
        var clips = importer.clipAnimations.Length > 0 ? importer.clipAnimations : importer.defaultClipAnimations;
        foreach (var clip in clips)
        {
            var action = Find(data, clip.takeName);
            if (action == null)
                continue;
            float length = (action.frame_end - action.frame_start) / action.fps;
            var events = new List<AnimationEvent>();
            foreach (var e in action.events)
            {
                // An imported clip's event times are fractions of the clip (0 to 1).
                events.Add(new AnimationEvent
                {
                    time = length > 0f ? Mathf.Clamp01(e.time / length) : 0f,
                    functionName = "OnStrideEvent",
                    stringParameter = e.name,
                });
            }
            clip.events = events.ToArray();
        }
        importer.clipAnimations = clips;
    }

    // Takes are named after the actions (which may hold a '|' themselves: "mixamo|Scene (root
    // motion)"); some importers put "Armature|" before the name.
    static StrideAction Find(StrideFile data, string take)
    {
        foreach (var action in data.actions)
            if (take == action.name || take.EndsWith("|" + action.name))
                return action;
        return null;
    }
}
