# temporary shim (not committed): what H2's module will provide
from engram.text import content_words
LABELLED_SETS = []
def labelled_scores(p): return {}
def observation_scores(conversation, facts_by_turn):
    obs=[]; 
    for k,v in conversation.items():
        if k.endswith('_observation') and isinstance(v,dict):
            for speaker, items in v.items():
                for text, ev in items:
                    ev = ev if isinstance(ev,list) else [ev]
                    obs.append((speaker,text,[str(e) for e in ev]))
    covered=0
    for speaker,text,ev in obs:
        words={w for w in content_words(text) if w.lower()!=speaker.lower()}
        facts=" ".join(f for e in ev for f in facts_by_turn.get(e,[]))
        fw=set(content_words(facts))
        if words and len(words & fw)/len(words)>=0.5: covered+=1
    nf=sum(map(len,facts_by_turn.values()))
    return {"coverage": covered/max(1,len(obs)),"observations":len(obs),"support":0.0,"facts":nf}
